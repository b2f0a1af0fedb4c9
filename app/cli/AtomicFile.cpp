#include "AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace blkmq {

std::string writeFileAtomically(const std::string& path, const std::string& content)
{
    if (path == "-") {
        std::cout << content << std::flush;
        return {};
    }
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            return "cannot write '" + path + "': " + std::strerror(errno);
        out << content;
        out.flush();
        if (!out) {
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            return "cannot write '" + path + "': write failed";
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        return "cannot write '" + path + "': " + ec.message();
    }
    return {};
}

} // namespace blkmq

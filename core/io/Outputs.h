#pragma once

#include <string>
#include <utility>
#include <vector>

namespace blkmq {

// Every file a command can write, by command and option: the one list. A command checks the outputs
// it was given with checkOutputs() before anything runs; `blkmqlab-cli outputs` prints the list, and
// the CLI tests try every pair of one command's outputs on the same file from it.
struct OutputOption {
    const char* command; // "run", "sweep", ... or "blkmqlab" for the desktop application
    const char* option; // "--json"
    const char* what; // what it writes
};
const std::vector<OutputOption>& outputOptions();

// The outputs of one command (option, path; an empty path is not given): each must be writable
// (SafeFile::checkWritable; exit 1 otherwise) and no two may write the same file, also through a
// link, a ".." or /dev/stdout (exit 2, naming both options). Returns the error and sets `exitCode`,
// or returns empty.
std::string checkOutputs(
    const std::string& command, const std::vector<std::pair<std::string, std::string>>& outputs, int& exitCode);

} // namespace blkmq

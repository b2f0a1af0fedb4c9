// libFuzzer target: a lesson file as a teacher would write it.
#include "lesson/Lesson.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)blkmq::Lesson::fromText(text, "fuzz");
    return 0;
}

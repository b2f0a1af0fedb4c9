#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace blkmq::cli {

using CommandHandler = int (*)(const std::vector<std::string>& args);

// One subcommand of blkmqlab-cli. `synopsis`: its forms, each starting "blkmqlab-cli NAME", a form's
// continuation lines indented under it; `summary`: what it does, in a sentence or two (wrapped under
// the synopsis when printed). The options each form takes are rows of options() (CliOptions.h).
struct CommandInfo {
    const char* name;
    const char* synopsis;
    const char* summary;
    CommandHandler handler; // null for help, which main() answers itself
};

// Every command, in the order help lists them.
const std::vector<CommandInfo>& commands();
const CommandInfo* findCommand(std::string_view name);
// The usage of one command (synopsis, then the summary wrapped under it) or of all of them, each line
// indented by `indent` spaces: help prints it, the README shows it (a test compares the two).
std::string commandUsage(const CommandInfo& c, int indent);
std::string allCommandsUsage(int indent);
// "run, explore, ..., help": the names, for a message about an unknown command.
std::string commandNames();

} // namespace blkmq::cli

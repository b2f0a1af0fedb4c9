#pragma once

#include "io/FieldTable.h"

#include <string>
#include <vector>

namespace blkmq::cli {

// Exit codes (docs/cli.md): 0 ok, 1 an output file could not be written,
// 2 usage or validation error, 3 a stall was detected with --fail-on-stall (or check's property
// was violated), 4 a lesson's expectation did not hold, 5 check's search hit a bound, 130 interrupted (SIGINT) after
// writing the complete rows so far.
inline constexpr int kExitOk = 0;
inline constexpr int kExitIo = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitStall = 3;
inline constexpr int kExitLesson = 4;
inline constexpr int kExitUnfinished = 5; // check: a bound ended the search before every ordering was tried
inline constexpr int kExitInterrupted = 130;

int runCommand(const std::vector<std::string>& args);
int topologyCommand(const std::vector<std::string>& args);
int presetsCommand(const std::vector<std::string>& args);
int costsCommand(const std::vector<std::string>& args);
int metricsCommand(const std::vector<std::string>& args);
int limitsCommand(const std::vector<std::string>& args);
int patchesCommand(const std::vector<std::string>& args);
int validateCommand(const std::vector<std::string>& args);
int exploreCommand(const std::vector<std::string>& args);
int checkCommand(const std::vector<std::string>& args);
int sweepCommand(const std::vector<std::string>& args);
int mergeCommand(const std::vector<std::string>& args);
int abCommand(const std::vector<std::string>& args);
int lessonsCommand(const std::vector<std::string>& args);
int lessonCommand(const std::vector<std::string>& args);
int oracleCommand(const std::vector<std::string>& args);
int fioKeysCommand(const std::vector<std::string>& args);
int outputsCommand(const std::vector<std::string>& args);
int fieldsCommand(const std::vector<std::string>& args);

} // namespace blkmq::cli

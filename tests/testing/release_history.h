#pragma once

#include <string>
#include <vector>

namespace webhookd::testing {

// An earlier release's files, read from the git history of the source tree (a clean
// clone has it in full). Each call fails the test, never skips it, when the history is
// not there.

// `git show <commit>:<path>`.
std::string FileAtCommit(const std::string& commit, const std::string& path);
// The .sql files under `dir` at the commit, in name order.
std::vector<std::string> SqlFilesAtCommit(const std::string& commit, const std::string& dir);
// What `webhookd migrate` of the commit made of an empty database at `url`: its set-up
// scripts, each of its migrations with its record, then its schema files in name order
// (function bodies unchecked, views last), recorded as applied.
void MigrateAsAtCommit(const std::string& commit, const std::string& url);

}  // namespace webhookd::testing

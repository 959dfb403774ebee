/// Family content hashes of the working tree and of a commit.
#include "pagecheck/review/content_hash.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "pagecheck/review/git.h"
#include "pagecheck/verify/sha256.h"

namespace pagecheck::review {

std::string content_hash(std::vector<SourceFile> files) {
  std::sort(files.begin(), files.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
  std::string stream = "pagecheck-sources/1\n";
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i > 0 && files[i].path == files[i - 1].path) {
      throw std::invalid_argument("content_hash: file '" + files[i].path + "' listed twice");
    }
    stream += files[i].path;
    stream += '\0';
    stream += std::to_string(files[i].bytes.size());
    stream += '\0';
    stream += files[i].bytes;
  }
  return verify::sha256_hex(stream);
}

std::string short_hash(const std::string& hash) {
  return hash.substr(0, 12);
}

FamilyHash working_tree_hash(const std::string& repo, const FamilySources& family) {
  FamilyHash h;
  h.family = family.name;
  h.files = resolve_sources(repo, family.patterns);
  if (h.files.empty()) {
    std::string patterns;
    for (const auto& p : family.patterns) patterns += (patterns.empty() ? "" : ", ") + p;
    throw EvidenceError((std::filesystem::path(repo) / kFamiliesFile).string() + ": family '" +
                        family.name + "' matches no file (patterns: " + patterns + ")");
  }
  std::vector<SourceFile> files;
  for (const auto& rel : h.files) {
    const std::string path = (std::filesystem::path(repo) / rel).string();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw EvidenceError(path + ": cannot read kernel source");
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files.push_back({rel, bytes.str()});
  }
  h.hash = content_hash(std::move(files));
  return h;
}

FamilyHash commit_hash(const std::string& repo, const std::string& commit,
                       const std::vector<std::string>& tree, const FamilySources& family) {
  FamilyHash h;
  h.family = family.name;
  h.files = match_paths(family.patterns, tree);
  if (h.files.empty()) return h;
  std::vector<SourceFile> files;
  for (const auto& rel : h.files) {
    auto bytes = file_at(repo, commit, rel);
    if (!bytes) throw std::runtime_error("git cannot read " + commit + ":" + rel + " in " + repo);
    files.push_back({rel, std::move(*bytes)});
  }
  h.hash = content_hash(std::move(files));
  return h;
}

}  // namespace pagecheck::review

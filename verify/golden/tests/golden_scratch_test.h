#pragma once
/// The fixture of the golden tests that damage or edit a copy of a golden set: a fresh scratch
/// directory filled before each test from the (read-only) set the test names.
#include <gtest/gtest.h>

#include <string>

#include "golden_test_util.h"

namespace pagecheck::verify::golden::testing {

/// A test whose scratch directory `dir_` holds a copy of the golden files of `source()`.
class GoldenScratchTest : public ::testing::Test {
 protected:
  /// The golden directory copied into `dir_` (pristine_goldens() or partial_goldens(...)).
  virtual std::string source() const = 0;

  void SetUp() override { copy_goldens(source(), dir_.str()); }

  /// Path of case `name`'s file in the scratch directory.
  std::string file(const std::string& name) const { return dir_.file(name + ".h5"); }

  /// The scratch copy, removed after the test.
  TempDir dir_;
};

}  // namespace pagecheck::verify::golden::testing

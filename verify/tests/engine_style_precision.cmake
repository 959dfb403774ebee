# Issue 13 §2: the engine-style CPU variant (pagecheck_check's sim_engine_style) under its
# declaration and the strict model, and the loosest accepted model against typical bug
# magnitudes (problems from the self-check's make_attention_problem).
add_executable(pagecheck_verify_engine_style_precision_tests engine_style_precision_test.cpp)
target_link_libraries(pagecheck_verify_engine_style_precision_tests PRIVATE
  pagecheck_check pagecheck_selfcheck GTest::gtest GTest::gtest_main pagecheck_warnings)
add_test(NAME pagecheck.test.verify_engine_style_precision
         COMMAND pagecheck_verify_engine_style_precision_tests)
set_tests_properties(pagecheck.test.verify_engine_style_precision PROPERTIES TIMEOUT 300)

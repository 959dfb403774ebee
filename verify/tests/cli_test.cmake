# pagecheck_cli_test(NAME SCRIPT [TIMEOUT SECONDS] [SKIP_RETURN_CODE CODE] [ARGS ...]): the CTest
# pagecheck.test.NAME that runs `bash SCRIPT <the pagecheck binary> ARGS...`, SCRIPT in the
# calling directory. The pagecheck target is defined later, in tools/; the generator expression
# resolves it. Included by verify/tests, verify/tests_gpu_props and verify/golden/tests.
include_guard(GLOBAL)

function(pagecheck_cli_test name script)
  cmake_parse_arguments(arg "" "TIMEOUT;SKIP_RETURN_CODE" "ARGS" ${ARGN})
  set(_test pagecheck.test.${name})
  add_test(NAME ${_test}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${script} $<TARGET_FILE:pagecheck> ${arg_ARGS})
  if(arg_TIMEOUT)
    set_tests_properties(${_test} PROPERTIES TIMEOUT ${arg_TIMEOUT})
  endif()
  if(DEFINED arg_SKIP_RETURN_CODE)
    set_tests_properties(${_test} PROPERTIES SKIP_RETURN_CODE ${arg_SKIP_RETURN_CODE})
  endif()
endfunction()

# Runs BIN with ARGS (a ;-list), checks its exit status against EXPECT_RC
# and its stdout+stderr against the regular expression EXPECT_RE.
# With EXPECT_STDERR, the standard error must also be exactly that line.
# Usage: cmake -DBIN=... -DARGS=a;b -DEXPECT_RC=2 -DEXPECT_RE=... -P this
execute_process(COMMAND ${BIN} ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
set(all "${out}${err}")
string(REPLACE "\n" " " flat "${all}")
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "breakwater ${ARGS}: exit status ${rc}, expected "
                      "${EXPECT_RC}\n${all}")
endif()
if(NOT flat MATCHES "${EXPECT_RE}")
  message(FATAL_ERROR "breakwater ${ARGS}: output does not match "
                      "'${EXPECT_RE}':\n${all}")
endif()
if(DEFINED EXPECT_STDERR AND NOT "${err}" STREQUAL "${EXPECT_STDERR}\n")
  message(FATAL_ERROR "breakwater ${ARGS}: standard error is not exactly "
                      "'${EXPECT_STDERR}':\n${err}")
endif()
message(STATUS "ok: exit ${rc}, output matches")

# ideal's library (CMakeLists.txt includes this for the registry's ideal line).  The option gives
# ideal a result column and a record column: a test build with it shows that a later engine's
# extra columns change no other engine's files (tests/integration/test_engine_columns.sh).
option(CS_IDEAL_TEST_COLUMNS "give the ideal engine extra columns (a test build)" OFF)
cs_module(cs_ideal engine/ideal DEPS cs_core cs_topo cs_expand)
if(CS_IDEAL_TEST_COLUMNS)
  target_compile_definitions(cs_ideal PRIVATE CS_IDEAL_TEST_COLUMNS)
endif()

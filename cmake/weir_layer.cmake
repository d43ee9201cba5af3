# weir_layer(NAME DEPS... TEST_DEPS... EXCLUDE...): a static library from the
# folder's *.cc files (less the EXCLUDE file names, which another target
# builds), and a test executable `NAME_test` from its *_test.cc files and
# test helpers (*_test_util.cc, which may use higher layers through
# TEST_DEPS), registered with CTest.
function(weir_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS;TEST_DEPS;EXCLUDE" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc
                                    ${CMAKE_CURRENT_SOURCE_DIR}/*_test_util.cc)
  if(tests)
    list(REMOVE_ITEM sources ${tests})
  endif()
  foreach(excluded ${ARG_EXCLUDE})
    list(REMOVE_ITEM sources ${CMAKE_CURRENT_SOURCE_DIR}/${excluded})
  endforeach()
  if(sources)
    add_library(${name} STATIC ${sources})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  else()  # a layer not written yet
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
  if(tests AND NOT WEIR_PYTHON_ONLY)
    add_executable(${name}_test ${tests})
    target_link_libraries(${name}_test PRIVATE ${name} ${ARG_TEST_DEPS} GTest::gtest GTest::gtest_main)
    add_test(NAME ${name}_test COMMAND ${name}_test)
    set_tests_properties(${name}_test PROPERTIES LABELS "unit")
  endif()
endfunction()

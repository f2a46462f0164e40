// The source that ag_test_pch compiles to build the tests' precompiled header
// (cmake/attogradTests.cmake, ATTOGRAD_TEST_PCH); it defines nothing.

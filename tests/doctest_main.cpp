// The one doctest main, built once into ag_test_main and linked into every test.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

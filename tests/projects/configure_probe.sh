#!/usr/bin/env bash
# What an autoconf `configure` asks of $CC, step by step (conftest.c, -E, failing compiles,
# links and programs); prints one line per check and exits non-zero if any check failed.
#
# Usage: CC="enzyme-build cc" configure_probe.sh   (runs in the current directory)
# shellcheck disable=SC2086  # $CC is a command line ("enzyme-build cc"), split as configure does
set -u

: "${CC:?set CC to the compiler command under test}"
failures=0

pass() { printf 'ok   %s\n' "$1"; }
fail() { printf 'FAIL %s\n' "$1"; failures=$((failures + 1)); }
check() {  # check "description" command…  (passes when the command succeeds)
    local what=$1
    shift
    if "$@" >>config.log 2>&1; then pass "$what"; else fail "$what"; fi
}
check_fails() {  # passes when the command fails, as configure expects for bad input
    local what=$1
    shift
    if "$@" >>config.log 2>&1; then fail "$what"; else pass "$what"; fi
}
clean() { rm -rf conftest* a.out; }

write() { cat >"$1"; }

: >config.log

# -- checking for C compiler version
check "\$CC --version" $CC --version

# -- checking whether the C compiler works / default output file name
clean
write conftest.c <<'EOF'
int main(void) { return 0; }
EOF
check "compile+link conftest.c (default a.out)" $CC conftest.c
check "a.out exists and runs" ./a.out
check "compile+link with -o conftest" $CC -o conftest conftest.c
check "./conftest runs (not cross compiling)" ./conftest

# -- checking for suffix of object files
clean
write conftest.c <<'EOF'
int main(void) { return 0; }
EOF
check "-c makes conftest.o" $CC -c conftest.c
check "conftest.o is the only new file" test "$(ls conftest.*)" = "$(printf 'conftest.c\nconftest.o')"

# -- checking whether we are using the GNU C compiler / accepts -g / C11
clean
write conftest.c <<'EOF'
#ifndef __GNUC__
       choke me
#endif
int main(void) { return 0; }
EOF
check "defines __GNUC__" $CC -c conftest.c
check "accepts -g" $CC -c -g conftest.c
write conftest.c <<'EOF'
_Static_assert(sizeof(int) >= 2, "c11");
int main(void) { _Alignas(8) int x = 0; return x; }
EOF
check "accepts -std=gnu11" $CC -std=gnu11 -c conftest.c

# -- checking how to run the C preprocessor
clean
write conftest.c <<'EOF'
#include <limits.h>
		     Syntax error
EOF
if $CC -E conftest.c >conftest.i 2>>config.log && grep -q 'Syntax error' conftest.i; then
    pass "-E preprocesses to stdout"
else
    fail "-E preprocesses to stdout"
fi
write conftest.c <<'EOF'
#include <ac_nonexistent.h>
EOF
check_fails "-E on a missing header fails" $CC -E conftest.c

# -- a compile error must fail and leave no object behind
clean
write conftest.c <<'EOF'
int main(void) { return not_declared_anywhere; }
EOF
check_fails "compile error exits non-zero" $CC -c conftest.c
check_fails "no conftest.o after a compile error" test -e conftest.o

# -- a link error must fail and leave no executable behind (AC_CHECK_FUNCS for a missing function)
clean
write conftest.c <<'EOF'
char ac_no_such_function(void);
int main(void) { return ac_no_such_function(); }
EOF
check_fails "link error exits non-zero" $CC -o conftest conftest.c
check_fails "no conftest after a link error" test -e conftest

# -- AC_CHECK_LIB([m], [cos])
clean
write conftest.c <<'EOF'
char cos(void);
int main(void) { return cos(); }
EOF
check "links against -lm (AC_CHECK_LIB)" $CC -o conftest conftest.c -lm

# -- AC_COMPUTE_INT / AC_CHECK_SIZEOF by compile-time assertion
clean
write conftest.c <<'EOF'
int main(void) { static int test_array[1 - 2 * !(sizeof(long) == sizeof(void *))]; test_array[0] = 0; return test_array[0]; }
EOF
check "true compile-time assertion compiles" $CC -c conftest.c
write conftest.c <<'EOF'
int main(void) { static int test_array[1 - 2 * !(sizeof(char) == 2)]; test_array[0] = 0; return test_array[0]; }
EOF
check_fails "false compile-time assertion fails" $CC -c conftest.c

# -- AC_RUN_IFELSE: exit codes of the built program come through
clean
write conftest.c <<'EOF'
#include <stdio.h>
int main(void) { FILE *f = fopen("conftest.val", "w"); if (!f) return 1; fprintf(f, "%d\n", (int)sizeof(double)); fclose(f); return 3; }
EOF
$CC -o conftest conftest.c >>config.log 2>&1
./conftest >>config.log 2>&1
status=$?
if [ "$status" -eq 3 ] && [ "$(cat conftest.val 2>/dev/null)" = 8 ]; then
    pass "built program runs, writes a file, exit status 3 preserved"
else
    fail "built program runs, writes a file, exit status 3 preserved (got $status)"
fi

# -- automake's depcomp (gcc3 mode): -MD -MF during a compile
clean
write conftest.h <<'EOF'
#define CONFTEST_VALUE 7
EOF
write conftest.c <<'EOF'
#include "conftest.h"
int value(void) { return CONFTEST_VALUE; }
EOF
check "-MD -MF conftest.d -c" $CC -MT conftest.o -MD -MP -MF conftest.d -c -o conftest.o conftest.c
check "dependency file names the header" grep -q 'conftest.h' conftest.d
check "object written alongside the dependency file" test -s conftest.o

# -- libtool and friends compile from stdin
clean
check "compiles C from stdin (-x c -)" sh -c "echo 'int from_stdin;' | $CC -x c -c - -o conftest.o"

clean
if [ "$failures" -ne 0 ]; then
    printf '%d check(s) failed; see config.log\n' "$failures"
    exit 1
fi
echo "all checks passed"

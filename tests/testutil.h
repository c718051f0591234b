/*
 * Shared test helpers: cmocka includes, a capturing log callback, a device
 * opener that skips when no EGL is present, and random data.
 */
#ifndef GLC_TESTUTIL_H
#define GLC_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#endif

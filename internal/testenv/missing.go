package testenv

import (
	"fmt"
	"os"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true), where every system
// tool the tests use is installed and a missing one is a failure.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing ends a test that lacks a tool or a facility of the machine: it
// fails in CI, which must provide it, and is skipped loudly elsewhere.
// how says how to get it (e.g. "apt-get install chromium").
func Missing(t testing.TB, what, how string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s: CI must provide it (%s)", what, how)
	}
	msg := fmt.Sprintf("!!! SKIPPED: %s (%s to run this test)", what, how)
	t.Log(msg)
	t.Skip(msg)
}

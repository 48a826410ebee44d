package testenv

import (
	"testing"
	"time"
)

// UntilLimit bounds Until's wait: generous, for a shared machine under
// load; a condition that is not met by then fails the test.
const UntilLimit = 30 * time.Second

// Until waits for cond to hold, checking it every 20 ms, and fails the test
// with what it waited for if it does not hold within UntilLimit.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(UntilLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", UntilLimit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package testenv

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address whose port was free a moment ago:
// for a server a test starts itself, or for a client that must find
// nothing there.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

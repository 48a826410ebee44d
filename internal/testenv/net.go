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
	addr, err := freeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// freeLoopback is FreeAddr for a set-up that returns its errors.
func freeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

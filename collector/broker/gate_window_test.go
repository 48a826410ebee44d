package broker

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestLoginWindowFromAccept: the login time runs from the accept, not
// from the first byte: a connection that sends its first byte just before
// its silent time is up, then nothing, is closed when the login time
// since its accept is up (3 s), not a login time after that byte (4.8 s).
func TestLoginWindowFromAccept(t *testing.T) {
	listen := testenv.FreeAddr(t)
	startObserved(t, listen, testAccounts(t), Limits{Pending: 3, LoginWait: 3 * time.Second, Silent: 2 * time.Second})
	c, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dialed := time.Now()
	time.Sleep(1800 * time.Millisecond)
	if _, err := c.Write([]byte{0x10}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = c.Read(make([]byte, 1))
	took := time.Since(dialed)
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("still open %s after the dial", took)
	}
	// Closed at 3 s since the accept: not before (the byte kept it from
	// its silent time), and well before 4.8 s (a login time after the
	// byte). A loaded box closes it late, never early.
	if took < 2800*time.Millisecond || took > 4200*time.Millisecond {
		t.Errorf("closed %s after the dial, want at 3s (the login time since the accept)", took)
	}
}

package agent

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// The systemd notify protocol (sd_notify(3)), written out: one datagram of
// newline-separated VAR=value assignments to the unix socket named by
// $NOTIFY_SOCKET. A name starting with '@' is in the abstract namespace;
// Go's unix sockaddr turns that '@' into the leading NUL byte on Linux.

// Notify states the agent sends.
const (
	NotifyReady     = "READY=1"
	NotifyStopping  = "STOPPING=1"
	NotifyReloading = "RELOADING=1"
	NotifyWatchdog  = "WATCHDOG=1"
)

// NotifyStatus returns the STATUS= assignment that systemctl status shows.
func NotifyStatus(s string) string { return "STATUS=" + s }

// Notifier sends states to systemd. Its zero value, or one built without
// NOTIFY_SOCKET, sends nothing: the agent runs the same outside systemd.
type Notifier struct {
	socket string
}

// NewNotifier reads NOTIFY_SOCKET through getenv.
func NewNotifier(getenv func(string) string) *Notifier {
	return &Notifier{socket: getenv("NOTIFY_SOCKET")}
}

// Enabled reports whether there is a socket to notify.
func (n *Notifier) Enabled() bool { return n != nil && n.socket != "" }

// Notify sends state, e.g. NotifyReady or "STATUS=idle\nWATCHDOG=1". It
// returns nil without sending when there is no socket.
func (n *Notifier) Notify(state string) error {
	if !n.Enabled() {
		return nil
	}
	if n.socket[0] != '/' && n.socket[0] != '@' {
		return fmt.Errorf("sd_notify: NOTIFY_SOCKET %q is neither a path nor @abstract", n.socket)
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.socket, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", n.socket, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify %s: %w", n.socket, err)
	}
	return nil
}

// Notify sends state to the socket in $NOTIFY_SOCKET; see Notifier.Notify.
func Notify(state string) error {
	return NewNotifier(os.Getenv).Notify(state)
}

// WatchdogInterval returns the watchdog timeout that systemd asks for
// through WATCHDOG_USEC (read with getenv), or 0 when the watchdog is off or
// meant for another process (WATCHDOG_PID set and not ours). Ping at half of
// it; StartWatchdog does.
func WatchdogInterval(getenv func(string) string) (time.Duration, error) {
	return watchdogInterval(getenv, os.Getpid())
}

func watchdogInterval(getenv func(string) string, pid int) (time.Duration, error) {
	us := getenv("WATCHDOG_USEC")
	if us == "" {
		return 0, nil
	}
	if p := getenv("WATCHDOG_PID"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return 0, fmt.Errorf("WATCHDOG_PID %q: not a number", p)
		}
		if n != pid {
			return 0, nil
		}
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("WATCHDOG_USEC %q: not a positive number", us)
	}
	return time.Duration(n) * time.Microsecond, nil
}

// Watchdog pings systemd's watchdog from a goroutine until Stop. Its owner
// calls Stop, which waits for the goroutine to end.
type Watchdog struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu  sync.Mutex
	err error // first failed ping
}

// StartWatchdog pings n with WATCHDOG=1 every timeout/2, the first time at
// once. With timeout <= 0 or a disabled Notifier it starts no goroutine and
// Stop returns at once.
func StartWatchdog(n *Notifier, timeout time.Duration) *Watchdog {
	w := &Watchdog{stop: make(chan struct{}), done: make(chan struct{})}
	if timeout <= 0 || !n.Enabled() {
		close(w.done)
		return w
	}
	go w.loop(n, timeout/2)
	return w
}

func (w *Watchdog) loop(n *Notifier, every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := n.Notify(NotifyWatchdog); err != nil {
			w.mu.Lock()
			if w.err == nil {
				w.err = err
			}
			w.mu.Unlock()
		}
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
	}
}

// Stop ends the pings, waits for the goroutine and returns the first ping
// error, if any. It may be called more than once.
func (w *Watchdog) Stop() error {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

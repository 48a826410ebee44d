package broker

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// LoginLimits bound what password logins may cost the collector: a
// bcrypt comparison takes ~57 ms of CPU at cost 10. Zero values take the
// defaults.
type LoginLimits struct {
	// InFlight is how many password checks run at once (default: half
	// the CPUs, at least 1), so that a flood of logins leaves the other
	// CPUs to the ingest. One more is kept for an account logging in
	// again from an address it logged in from before.
	InFlight int
	// QueueWait is how long a login waits for its turn before it is
	// refused (not counted as a failure); default 5 s.
	QueueWait time.Duration
	// FreeFailures is how many failed logins of a source address, or of
	// a user name, start the backoff; default 10.
	FreeFailures int
	// Backoff is the first wait, at FreeFailures, doubled at each
	// further failure up to MaxBackoff; defaults 1 s and 1 min. During
	// it, logins from that address or for that user are refused without
	// checking their password.
	Backoff, MaxBackoff time.Duration
	// Forget is how long after its last failure an address or a user is
	// forgotten; default 15 min.
	Forget time.Duration
}

func (l *LoginLimits) fill() {
	if l.InFlight <= 0 {
		l.InFlight = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if l.QueueWait <= 0 {
		l.QueueWait = 5 * time.Second
	}
	if l.FreeFailures <= 0 {
		l.FreeFailures = 10
	}
	if l.Backoff <= 0 {
		l.Backoff = time.Second
	}
	if l.MaxBackoff <= 0 {
		l.MaxBackoff = time.Minute
	}
	if l.Forget <= 0 {
		l.Forget = 15 * time.Minute
	}
}

// maxLoginKeys bounds the addresses and user names the throttle follows;
// past it, the ones whose backoff is over are forgotten first.
const maxLoginKeys = 8192

// knownPerUser is how many addresses an account is remembered to have
// logged in from.
const knownPerUser = 4

// logins throttles password logins: failures per source address and per
// user name (known or not: an unknown name is followed as a known one
// is, so that the throttle does not tell them apart) start a backoff past
// lim.FreeFailures, and at most lim.InFlight password checks run at once.
// An account that logs in from an address it logged in from before (a
// device reconnecting) is not held back by either backoff and has a
// check of its own reserved: a stranger's flood cannot lock it out.
type logins struct {
	lim   LoginLimits
	now   func() time.Time
	sem   chan struct{} // the shared password checks
	known chan struct{} // the one reserved for known address and user pairs

	mu    sync.Mutex
	fails map[loginKey]*loginFails
	good  map[string][]netip.Prefix // user: addresses it logged in from, newest last
}

type loginKey struct {
	user string       // "" for an address's entry
	addr netip.Prefix // invalid for a user's entry
}

type loginFails struct {
	n     int       // failures
	until time.Time // refused until then
	last  time.Time // the last failure
}

func newLogins(lim LoginLimits) *logins {
	lim.fill()
	return &logins{lim: lim, now: time.Now, sem: make(chan struct{}, lim.InFlight), known: make(chan struct{}, 1),
		fails: map[loginKey]*loginFails{}, good: map[string][]netip.Prefix{}}
}

// sourceOf is the address logins are counted by: the IP of remote
// ("ip:port"), IPv6 by its /64 (one host's share).
func sourceOf(remote string) netip.Prefix {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}

// isKnown reports whether user logged in from src before.
func (l *logins) isKnown(src netip.Prefix, user string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.good[user] {
		if p == src {
			return true
		}
	}
	return false
}

// throttled says why a login of user from src is refused without a
// check, "" when it is not. The reason does not say for how long: the
// log counts refusals by reason.
func (l *logins) throttled(src netip.Prefix, user string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if f := l.fails[loginKey{addr: src}]; f != nil && now.Before(f.until) {
		return "too many failed logins from this address"
	}
	if f := l.fails[loginKey{user: user}]; f != nil && now.Before(f.until) {
		return "too many failed logins of this user"
	}
	return ""
}

// failed counts a failed login of user from src.
func (l *logins) failed(src netip.Prefix, user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range []loginKey{{addr: src}, {user: user}} {
		f := l.fails[k]
		if f == nil || now.Sub(f.last) > l.lim.Forget {
			if f == nil && len(l.fails) >= maxLoginKeys {
				l.evictLocked(now)
			}
			f = &loginFails{}
			l.fails[k] = f
		}
		f.n++
		f.last = now
		if over := f.n - l.lim.FreeFailures; over >= 0 {
			d := l.lim.Backoff << min(over, 30)
			if d <= 0 || d > l.lim.MaxBackoff {
				d = l.lim.MaxBackoff
			}
			f.until = now.Add(d)
		}
	}
}

// evictLocked makes room: entries forgotten or out of their backoff
// first, else any one.
func (l *logins) evictLocked(now time.Time) {
	for k, f := range l.fails {
		if !now.Before(f.until) || now.Sub(f.last) > l.lim.Forget {
			delete(l.fails, k)
		}
	}
	for k := range l.fails {
		if len(l.fails) < maxLoginKeys {
			break
		}
		delete(l.fails, k)
	}
}

// succeeded notes that user logged in from src: the address is
// remembered for it. The user's failures are not forgotten: they may be
// a stranger's, from elsewhere, and its own logins from that address are
// not held back by them.
func (l *logins) succeeded(src netip.Prefix, user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.good[user]
	for i, p := range g {
		if p == src {
			g = append(g[:i], g[i+1:]...)
			break
		}
	}
	g = append(g, src)
	if len(g) > knownPerUser {
		g = g[len(g)-knownPerUser:]
	}
	l.good[user] = g
}

// check runs verify in one of the password checks in flight, the
// reserved one too when known. ok is false when no turn came within
// lim.QueueWait.
func (l *logins) check(known bool, verify func() bool) (right, ok bool) {
	t := time.NewTimer(l.lim.QueueWait)
	defer t.Stop()
	var slot chan struct{}
	if known {
		select {
		case l.known <- struct{}{}:
			slot = l.known
		case l.sem <- struct{}{}:
			slot = l.sem
		case <-t.C:
			return false, false
		}
	} else {
		select {
		case l.sem <- struct{}{}:
			slot = l.sem
		case <-t.C:
			return false, false
		}
	}
	defer func() { <-slot }()
	return verify(), true
}

// dummyAccount is checked for a user name no account has, so that its
// refusal costs what a known user's does: a bcrypt hash of a random
// password at the cost most device accounts have, or a plain one when
// most have plain passwords.
func dummyAccount(a *Accounts) Account {
	costs := map[int]int{}
	plain := 0
	for _, d := range a.Devices {
		if d.PasswordBcrypt == "" {
			plain++
			continue
		}
		if c, err := bcrypt.Cost([]byte(d.PasswordBcrypt)); err == nil {
			costs[c]++
		}
	}
	cost, most := bcrypt.DefaultCost, 0
	for c, n := range costs {
		if n > most || (n == most && c > cost) {
			cost, most = c, n
		}
	}
	var b [18]byte
	rand.Read(b[:])
	pw := hex.EncodeToString(b[:])
	if plain > most {
		return Account{Password: pw}
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		return Account{Password: pw}
	}
	return Account{PasswordBcrypt: string(h)}
}

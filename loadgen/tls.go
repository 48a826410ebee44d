package loadgen

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/edgebench/edgebench/loadgen/report"
)

// TLSConfig is how a load test speaks TLS to an https URL.
type TLSConfig struct {
	// CACerts holds the PEM certificates of the CAs the server's
	// certificate must chain to; empty: the system's.
	CACerts []byte
	// Insecure skips the verification of the server's certificate, as ab
	// and wrk do.
	Insecure bool
	// NoResume makes every new connection a full handshake, the cost a
	// server pays for each new visitor. By default a new connection
	// resumes the session of an earlier one (TLS session tickets), as
	// browsers and wrk do; ab never does.
	NoResume bool
	// Version pins the protocol (tls.VersionTLS12 or tls.VersionTLS13);
	// 0 lets the server choose between them.
	Version uint16
	// ServerName is the name sent in SNI, which the certificate must
	// hold; "": the host of a Host header given, else the URL's host. An
	// IP address is checked against the certificate but not sent: SNI
	// carries names only.
	ServerName string
	// NoSNI sends no server name at all (ab's -I). It needs Insecure: the
	// certificate is checked against the name.
	NoSNI bool
}

// tlsGroups are the key exchanges offered, the first one's share sent in
// the hello: X25519 first, as OpenSSL 3 (ab, wrk, nginx, curl of Debian 12)
// offers it. Go's default would add a hybrid post-quantum share
// (X25519MLKEM768) that those servers ignore and that costs the client 12 %
// more CPU and 23 KB per full handshake. P-256 is needed for TLS 1.2 with an
// ECDSA P-256 certificate.
var tlsGroups = []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384}

// serverName is the name a load test of c sends in SNI and verifies.
func serverName(c Config, t report.Target) string {
	if c.TLS.ServerName != "" {
		return c.TLS.ServerName
	}
	for _, h := range c.Headers {
		if strings.EqualFold(h.Name, "Host") {
			if host, _, err := net.SplitHostPort(h.Value); err == nil {
				return strings.Trim(host, "[]")
			}
			return strings.Trim(h.Value, "[]")
		}
	}
	return t.Host
}

// clientTLS builds the crypto/tls configuration all connections of a load
// test share, its session cache included.
func clientTLS(c Config, t report.Target) (*tls.Config, error) {
	tc := &tls.Config{
		ServerName:         serverName(c, t),
		InsecureSkipVerify: c.TLS.Insecure,
		CurvePreferences:   tlsGroups,
		MinVersion:         tls.VersionTLS12,
	}
	if c.TLS.NoSNI {
		tc.ServerName = ""
	}
	switch c.TLS.Version {
	case 0:
	case tls.VersionTLS12, tls.VersionTLS13:
		tc.MinVersion, tc.MaxVersion = c.TLS.Version, c.TLS.Version
	default:
		return nil, configErr("TLS version %#x: want 1.2 or 1.3", c.TLS.Version)
	}
	if len(c.TLS.CACerts) > 0 {
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(c.TLS.CACerts) {
			return nil, configErr("CA certificates: no PEM certificate found")
		}
	}
	if c.HTTP2 {
		// h2, then http/1.1 as browsers and curl offer them: a server
		// without HTTP/2 then chooses http/1.1, which noH2 reports in one
		// line, where with h2 alone nginx ends the handshake with a bare
		// "no application protocol". ab and wrk send no ALPN, and neither
		// does HTTP/1.1 here.
		tc.NextProtos = []string{"h2", "http/1.1"}
	}
	if !c.TLS.NoResume {
		// Keyed by server name (the address without one): one entry
		// serves every connection of the run.
		tc.ClientSessionCache = tls.NewLRUClientSessionCache(8)
	}
	return tc, nil
}

// checkTLS validates the TLS options of c for a target.
func (c Config) checkTLS(t report.Target) error {
	if t.Scheme != "https" {
		if c.TLS.Insecure || len(c.TLS.CACerts) > 0 || c.TLS.Version != 0 || c.TLS.ServerName != "" || c.TLS.NoSNI {
			// NoResume is harmless: a shared command may carry it for
			// either scheme.
			return configErr("URL %q: TLS options need an https:// URL", t.URL)
		}
		return nil
	}
	if c.TLS.NoSNI && !c.TLS.Insecure {
		return configErr("no SNI needs the certificate unchecked too (insecure): it is checked against the name")
	}
	_, err := clientTLS(c, t)
	return err
}

// HandshakeError is the error of a run whose TLS handshakes all failed
// for a reason that will not go away by itself: the server's certificate
// was refused, the server speaks no TLS, or no HTTP/2. Err says which.
type HandshakeError struct {
	Addr string // host:port of the URL
	Err  error
}

func (e *HandshakeError) Error() string {
	var ce *tls.CertificateVerificationError
	switch {
	case errors.Is(e.Err, errNoTLS):
		return e.Addr + " speaks no TLS: its answer to the TLS hello is not TLS (an http:// server?)"
	case errors.Is(e.Err, ErrNoH2):
		return e.Addr + " " + e.Err.Error()
	case errors.As(e.Err, &ce):
		hint := "--insecure skips the check"
		var ua x509.UnknownAuthorityError
		if errors.As(ce.Err, &ua) {
			hint = "--cacert FILE gives the CA that signed it; --insecure skips the check"
		}
		return fmt.Sprintf("%s: certificate refused: %v (%s)", e.Addr, ce.Err, hint)
	}
	return e.Addr + ": " + e.Err.Error()
}

// Unwrap returns the handshake's error.
func (e *HandshakeError) Unwrap() error { return e.Err }

var (
	// errNoTLS is a handshake whose first answer is not a TLS record.
	errNoTLS = errors.New("speaks no TLS")
	// ErrNoH2 is a server that speaks no HTTP/2 over TLS (ALPN) or in
	// cleartext (h2c).
	ErrNoH2 = errors.New("speaks no HTTP/2")
)

// noH2 is the error of a TLS handshake of --h2 that ended on the
// protocol negotiated (ALPN), not h2.
func noH2(negotiated string) error {
	if negotiated == "" {
		return fmt.Errorf("%w: it took no h2 in the TLS handshake (ALPN) (leave out --h2 for HTTP/1.1)", ErrNoH2)
	}
	return fmt.Errorf("%w: it chose %s over h2 in the TLS handshake (ALPN) (leave out --h2 for HTTP/1.1)", ErrNoH2, negotiated)
}

// handshakeErr says what a failed handshake means, and whether it will
// fail again whatever the load (a refused certificate, a server that
// speaks no TLS or no h2), so that a run with no handshake yet can stop.
func handshakeErr(err error, h2 bool) (_ error, lasting bool) {
	var (
		rh    tls.RecordHeaderError
		ce    *tls.CertificateVerificationError
		alert tls.AlertError
		x509e x509.UnknownAuthorityError
	)
	switch {
	case errors.As(err, &rh):
		return errNoTLS, true
	case errors.As(err, &ce), errors.As(err, &x509e):
		return err, true
	case errors.As(err, &alert):
		// The server's alert: 120 is no_application_protocol, the
		// answer of a server without HTTP/2 to an ALPN of h2 alone.
		if h2 && alert == 120 {
			return noH2(""), true
		}
		return fmt.Errorf("TLS handshake failed: %w", err), true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return err, false
	}
	if strings.HasPrefix(err.Error(), "tls: ") {
		// Go's own refusals: no common version, cipher or group.
		return fmt.Errorf("TLS handshake failed: %w", err), true
	}
	return err, false
}

// tlsInfoOf describes a connection's state.
func tlsInfoOf(st tls.ConnectionState, serverName string) report.TLSInfo {
	i := report.TLSInfo{
		Version: tlsVersionName(st.Version), Cipher: tls.CipherSuiteName(st.CipherSuite),
		ServerName: serverName, ALPN: st.NegotiatedProtocol,
	}
	if st.CurveID != 0 {
		i.Group = st.CurveID.String()
	}
	if len(st.PeerCertificates) > 0 {
		i.KeyBits = publicKeyBits(st.PeerCertificates[0].PublicKey)
	}
	return i
}

func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLSv1"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return fmt.Sprintf("0x%04x", v)
}

// publicKeyBits is the size of a key as OpenSSL's EVP_PKEY_bits gives it.
func publicKeyBits(k any) int {
	switch k := k.(type) {
	case *rsa.PublicKey:
		return k.N.BitLen()
	case *ecdsa.PublicKey:
		return k.Curve.Params().BitSize
	case ed25519.PublicKey:
		return 253
	}
	return 0
}

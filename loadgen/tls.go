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
		// Offered alone: a server without HTTP/2 then says so in the
		// handshake rather than answering in HTTP/1.1. ab and wrk send
		// no ALPN, and neither does HTTP/1.1 here.
		tc.NextProtos = []string{"h2"}
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
			return fmt.Errorf("%w: ALPN has no h2 (leave out --h2 for HTTP/1.1)", ErrNoH2), true
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

// TLSInfo is what the TLS handshakes of a load test negotiated, and how
// many there were.
type TLSInfo struct {
	Version    string `json:"version"`               // as OpenSSL names it: TLSv1.2, TLSv1.3
	Cipher     string `json:"cipher"`                // IANA name, e.g. TLS_AES_128_GCM_SHA256
	Group      string `json:"group,omitempty"`       // key exchange, e.g. X25519; "" for a resumed TLS 1.2 session
	ServerName string `json:"server_name,omitempty"` // sent in SNI
	ALPN       string `json:"alpn,omitempty"`
	KeyBits    int    `json:"key_bits,omitempty"` // of the server certificate's public key
	Resume     bool   `json:"resume"`             // resumption was on
	// Handshakes counts the window's new connections' handshakes, full
	// and resumed; Resumed those that resumed a session.
	Handshakes int64 `json:"handshakes"`
	Resumed    int64 `json:"resumed"`
}

// tlsInfoOf describes a connection's state.
func tlsInfoOf(st tls.ConnectionState, serverName string) TLSInfo {
	i := TLSInfo{
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

// OpenSSLCipher is the cipher suite's name as OpenSSL (and so ab) gives
// it: the same as IANA's for TLS 1.3, its own for TLS 1.2.
func (i TLSInfo) OpenSSLCipher() string {
	for _, id := range opensslNames {
		if tls.CipherSuiteName(id.id) == i.Cipher {
			return id.name
		}
	}
	return i.Cipher
}

// CipherBits is the cipher's key size, as OpenSSL's SSL_CIPHER_get_bits.
func (i TLSInfo) CipherBits() int {
	switch {
	case strings.Contains(i.Cipher, "AES_128"):
		return 128
	case strings.Contains(i.Cipher, "AES_256"), strings.Contains(i.Cipher, "CHACHA20"):
		return 256
	case strings.Contains(i.Cipher, "3DES"):
		return 112
	}
	return 0
}

// TempKey is the key exchange as ab's "Server Temp Key" line prints it
// ("X25519 253 bits", "ECDH prime256v1 256 bits"); "" when there was
// none (a resumed TLS 1.2 session).
func (i TLSInfo) TempKey() string {
	switch i.Group {
	case "":
		return ""
	case "X25519":
		return "X25519 253 bits"
	case "CurveP256":
		return "ECDH prime256v1 256 bits"
	case "CurveP384":
		return "ECDH secp384r1 384 bits"
	case "CurveP521":
		return "ECDH secp521r1 521 bits"
	}
	return i.Group
}

// opensslNames are OpenSSL's names of the TLS 1.2 suites Go offers.
var opensslNames = []struct {
	id   uint16
	name string
}{
	{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "ECDHE-ECDSA-AES128-GCM-SHA256"},
	{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, "ECDHE-ECDSA-AES256-GCM-SHA384"},
	{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, "ECDHE-RSA-AES128-GCM-SHA256"},
	{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "ECDHE-RSA-AES256-GCM-SHA384"},
	{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE-ECDSA-CHACHA20-POLY1305"},
	{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE-RSA-CHACHA20-POLY1305"},
	{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, "ECDHE-ECDSA-AES128-SHA"},
	{tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, "ECDHE-ECDSA-AES256-SHA"},
	{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, "ECDHE-RSA-AES128-SHA"},
	{tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, "ECDHE-RSA-AES256-SHA"},
	{tls.TLS_RSA_WITH_AES_128_GCM_SHA256, "AES128-GCM-SHA256"},
	{tls.TLS_RSA_WITH_AES_256_GCM_SHA384, "AES256-GCM-SHA384"},
	{tls.TLS_RSA_WITH_AES_128_CBC_SHA, "AES128-SHA"},
	{tls.TLS_RSA_WITH_AES_256_CBC_SHA, "AES256-SHA"},
}

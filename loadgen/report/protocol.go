package report

import (
	"crypto/tls"
	"fmt"
	"strings"
)

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
	// Handshakes counts the handshakes of the window's new connections,
	// full and resumed; Resumed those that resumed a session.
	Handshakes int64 `json:"handshakes"`
	Resumed    int64 `json:"resumed"`
}

// OpenSSLCipher is the cipher suite's name as OpenSSL (and so ab) gives
// it: the same as IANA's for TLS 1.3, its own for TLS 1.2.
func (i TLSInfo) OpenSSLCipher() string {
	if n, ok := opensslNames[i.Cipher]; ok {
		return n
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

// opensslNames are OpenSSL's names of the TLS 1.2 suites Go offers, by
// their IANA names.
var opensslNames = map[string]string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256":       "ECDHE-ECDSA-AES128-GCM-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384":       "ECDHE-ECDSA-AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256":         "ECDHE-RSA-AES128-GCM-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384":         "ECDHE-RSA-AES256-GCM-SHA384",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256":   "ECDHE-RSA-CHACHA20-POLY1305",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA":          "ECDHE-ECDSA-AES128-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA":          "ECDHE-ECDSA-AES256-SHA",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA":            "ECDHE-RSA-AES128-SHA",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA":            "ECDHE-RSA-AES256-SHA",
	"TLS_RSA_WITH_AES_128_GCM_SHA256":               "AES128-GCM-SHA256",
	"TLS_RSA_WITH_AES_256_GCM_SHA384":               "AES256-GCM-SHA384",
	"TLS_RSA_WITH_AES_128_CBC_SHA":                  "AES128-SHA",
	"TLS_RSA_WITH_AES_256_CBC_SHA":                  "AES256-SHA",
}

// H2Info is what the HTTP/2 connections of a load test saw.
type H2Info struct {
	Streams int `json:"streams"` // concurrent streams per connection asked for
	// MaxStreams is the server's SETTINGS_MAX_CONCURRENT_STREAMS, which
	// caps Streams; 0 when it set none.
	MaxStreams int64 `json:"max_streams,omitempty"`
	// GoAways counts the connections the server ended with GOAWAY, and
	// Retried the window's requests a GOAWAY left unprocessed, sent again
	// on a new connection.
	GoAways int64 `json:"goaways"`
	Retried int64 `json:"retried"`
	// HeaderBytes are the bytes of the window's response header blocks
	// (HEADERS and CONTINUATION payloads), part of LoadResult.Bytes.
	HeaderBytes int64 `json:"header_bytes"`
	// Resets counts the streams the server reset (Errors.Reset), by
	// error code (REFUSED_STREAM, CANCEL, ...).
	Resets map[string]int64 `json:"resets,omitempty"`
}

// ParseTLSVersion reads a TLS version as users and commands give it:
// "1.2" or "1.3" (also "TLS1.2", "tls1.3"); "" is 0, the server's choice.
func ParseTLSVersion(s string) (uint16, error) {
	switch strings.TrimPrefix(strings.ToLower(s), "tls") {
	case "":
		return 0, nil
	case "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("TLS version %q: want 1.2 or 1.3", s)
}

// TLSVersionName is v as ParseTLSVersion reads it: "1.2", "1.3", or ""
// for 0 (and any other value).
func TLSVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return ""
}

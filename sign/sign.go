// Package sign signs and checks the commands the collector sends: the
// collector signs with a Signer, a device checks with a Verifier.
//
// Which to choose: Ed25519 where you can. The device holds only the
// collector's public key, so a stolen or cloned board cannot forge commands
// for the rest of the fleet, and the private key never leaves the collector.
// HMAC-SHA256 is the simplest thing that works: one shared secret on the
// collector and every device; anyone who reads it from one board's SD card
// can command them all.
//
// Key files are text: the key in hex or in base64 (standard or URL alphabet,
// padded or not), surrounding whitespace and lines starting with '#'
// ignored; hex is tried first. Ed25519 keys may also be PEM: "PUBLIC KEY"
// (PKIX) or "PRIVATE KEY" (PKCS #8), as `openssl genpkey -algorithm ed25519`
// and `openssl pkey -pubout` write them. An HMAC key has at least 32 bytes
// (`openssl rand -hex 32`). An Ed25519 private key in hex or base64 is the
// 32-byte seed or the 64-byte seed||public key.
//
// What is signed is the command's canonical bytes as package wire produces
// them (wire.Command.SigningBytes): the command with the fleet and device,
// or "_all", of the topic it is sent on, so a command signed for one device
// is refused by every other. This package only sees msg.
package sign

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Verifier checks a command's signature.
type Verifier interface {
	Verify(msg, sig []byte) error
}

// Signer signs a command: an Ed25519 private key or an HMAC key.
type Signer interface {
	Sign(msg []byte) []byte
}

var (
	// ErrUnsigned is an unsigned command on a device that requires signatures.
	ErrUnsigned = errors.New("unsigned command rejected: signature required")
	// ErrBadSignature is a signature that does not verify.
	ErrBadSignature = errors.New("bad signature")
)

// MinHMACKeyLen is the shortest HMAC key accepted, in bytes.
const MinHMACKeyLen = 32

// CheckSignature applies the signing rules to one command: with no
// signature it returns ErrUnsigned when required is true, else nil; with a
// signature it verifies it with v, returning ErrBadSignature when it does not
// match. A signature on a device without a key (v nil, required false) is
// ignored.
func CheckSignature(v Verifier, required bool, msg, sig []byte) error {
	if len(sig) == 0 {
		if required {
			return ErrUnsigned
		}
		return nil
	}
	if v == nil {
		if required {
			return errors.New("signature required but no key configured")
		}
		return nil
	}
	return v.Verify(msg, sig)
}

type hmacKey []byte

// NewHMACVerifier returns a Verifier of HMAC-SHA256 signatures with key.
func NewHMACVerifier(key []byte) (Verifier, error) {
	if len(key) < MinHMACKeyLen {
		return nil, fmt.Errorf("hmac key has %d bytes, want at least %d", len(key), MinHMACKeyLen)
	}
	return hmacKey(key), nil
}

// NewHMACSigner returns a Signer of HMAC-SHA256 signatures with key.
func NewHMACSigner(key []byte) (Signer, error) {
	if len(key) < MinHMACKeyLen {
		return nil, fmt.Errorf("hmac key has %d bytes, want at least %d", len(key), MinHMACKeyLen)
	}
	return hmacKey(key), nil
}

func (k hmacKey) Sign(msg []byte) []byte {
	m := hmac.New(sha256.New, k)
	m.Write(msg)
	return m.Sum(nil)
}

func (k hmacKey) Verify(msg, sig []byte) error {
	if !hmac.Equal(k.Sign(msg), sig) { // constant time
		return ErrBadSignature
	}
	return nil
}

type ed25519Verifier ed25519.PublicKey

// NewEd25519Verifier returns a Verifier of Ed25519 signatures by pub's key.
func NewEd25519Verifier(pub ed25519.PublicKey) (Verifier, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("ed25519 public key has %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	return ed25519Verifier(pub), nil
}

func (v ed25519Verifier) Verify(msg, sig []byte) error {
	if len(sig) != ed25519.SignatureSize || !ed25519.Verify(ed25519.PublicKey(v), msg, sig) {
		return ErrBadSignature
	}
	return nil
}

type ed25519Signer ed25519.PrivateKey

// NewEd25519Signer returns a Signer with priv.
func NewEd25519Signer(priv ed25519.PrivateKey) (Signer, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("ed25519 private key has %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	return ed25519Signer(priv), nil
}

func (s ed25519Signer) Sign(msg []byte) []byte {
	return ed25519.Sign(ed25519.PrivateKey(s), msg)
}

// LoadHMACVerifier reads an HMAC key file and returns its Verifier.
func LoadHMACVerifier(path string) (Verifier, error) {
	key, err := LoadHMACKey(path)
	if err != nil {
		return nil, err
	}
	return NewHMACVerifier(key)
}

// LoadEd25519Verifier reads an Ed25519 public key file and returns its
// Verifier.
func LoadEd25519Verifier(path string) (Verifier, error) {
	pub, err := LoadEd25519PublicKey(path)
	if err != nil {
		return nil, err
	}
	return NewEd25519Verifier(pub)
}

// LoadHMACKey reads an HMAC key file (hex or base64).
func LoadHMACKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hmac key: %w", err)
	}
	key, err := decodeKeyText(data)
	if err != nil {
		return nil, fmt.Errorf("hmac key %s: %w", path, err)
	}
	if len(key) < MinHMACKeyLen {
		return nil, fmt.Errorf("hmac key %s: %d bytes, want at least %d", path, len(key), MinHMACKeyLen)
	}
	return key, nil
}

// LoadEd25519PublicKey reads an Ed25519 public key file (hex, base64 or PEM
// "PUBLIC KEY").
func LoadEd25519PublicKey(path string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ed25519 public key: %w", err)
	}
	pub, err := parseEd25519PublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("ed25519 public key %s: %w", path, err)
	}
	return pub, nil
}

// LoadEd25519PrivateKey reads an Ed25519 private key file (hex or base64 of
// the seed or the full key, or PEM "PRIVATE KEY").
func LoadEd25519PrivateKey(path string) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ed25519 private key: %w", err)
	}
	priv, err := parseEd25519PrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("ed25519 private key %s: %w", path, err)
	}
	return priv, nil
}

func parseEd25519PublicKey(data []byte) (ed25519.PublicKey, error) {
	if blk, _ := pem.Decode(data); blk != nil {
		if blk.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("PEM block %q, want \"PUBLIC KEY\"", blk.Type)
		}
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, err
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("PEM key is %T, not ed25519", k)
		}
		return pub, nil
	}
	raw, err := decodeKeyText(data)
	if err != nil {
		return nil, err
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%d bytes, want %d", len(raw), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

func parseEd25519PrivateKey(data []byte) (ed25519.PrivateKey, error) {
	if blk, _ := pem.Decode(data); blk != nil {
		if blk.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("PEM block %q, want \"PRIVATE KEY\"", blk.Type)
		}
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, err
		}
		priv, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("PEM key is %T, not ed25519", k)
		}
		return priv, nil
	}
	raw, err := decodeKeyText(data)
	if err != nil {
		return nil, err
	}
	switch len(raw) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(raw), nil
	case ed25519.PrivateKeySize:
		priv := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
		if !hmac.Equal(priv, raw) {
			return nil, errors.New("public half does not match the seed")
		}
		return priv, nil
	}
	return nil, fmt.Errorf("%d bytes, want %d (seed) or %d", len(raw), ed25519.SeedSize, ed25519.PrivateKeySize)
}

// decodeKeyText decodes a key written in hex or base64, ignoring whitespace
// and '#' comment lines.
func decodeKeyText(data []byte) ([]byte, error) {
	var b strings.Builder
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		b.WriteString(strings.Join(strings.Fields(line), ""))
	}
	s := b.String()
	if s == "" {
		return nil, errors.New("empty key file")
	}
	if k, err := hex.DecodeString(s); err == nil {
		return k, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			return k, nil
		}
	}
	return nil, errors.New("not hex or base64")
}

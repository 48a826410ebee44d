package sign

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/internal/testenv"
)

func TestHMACRoundTrip(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	for name, text := range map[string]string{
		"hex":       hex.EncodeToString(key) + "\n",
		"hex-upper": "# shared key\n" + strings.ToUpper(hex.EncodeToString(key)),
		"base64":    base64.StdEncoding.EncodeToString(key),
		"base64url": base64.RawURLEncoding.EncodeToString(key) + "\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := testenv.TempFile(t, "hmac.key", text)
			got, err := LoadHMACKey(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(key) {
				t.Fatalf("key %x, want %x", got, key)
			}
			v, err := LoadHMACVerifier(path)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := NewHMACSigner(key)
			msg := []byte("canonical command bytes")
			sig := s.Sign(msg)
			if err := v.Verify(msg, sig); err != nil {
				t.Errorf("good signature: %v", err)
			}
			if err := v.Verify([]byte("canonical command bytez"), sig); !errors.Is(err, ErrBadSignature) {
				t.Errorf("changed message: %v", err)
			}
			sig[0] ^= 1
			if err := v.Verify(msg, sig); !errors.Is(err, ErrBadSignature) {
				t.Errorf("changed signature: %v", err)
			}
			if err := v.Verify(msg, sig[:10]); !errors.Is(err, ErrBadSignature) {
				t.Errorf("short signature: %v", err)
			}
		})
	}
}

func TestHMACKeyTooShort(t *testing.T) {
	if _, err := LoadHMACKey(testenv.TempFile(t, "k", strings.Repeat("ab", 16))); err == nil || !strings.Contains(err.Error(), "16 bytes, want at least 32") {
		t.Errorf("err %v", err)
	}
	if _, err := LoadHMACKey(testenv.TempFile(t, "k", "not a key!")); err == nil || !strings.Contains(err.Error(), "not hex or base64") {
		t.Errorf("err %v", err)
	}
	if _, err := LoadHMACKey(testenv.TempFile(t, "k", "# only a comment\n")); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("err %v", err)
	}
}

func TestEd25519RoundTrip(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkix, _ := x509.MarshalPKIXPublicKey(pub)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(priv)
	pubFiles := map[string]string{
		"hex":    hex.EncodeToString(pub),
		"base64": base64.StdEncoding.EncodeToString(pub),
		"pem":    string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})),
	}
	privFiles := map[string]string{
		"seed-hex":    hex.EncodeToString(priv.Seed()),
		"full-base64": base64.StdEncoding.EncodeToString(priv),
		"pem":         string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})),
	}
	msg := []byte("cmd")
	for pn, ptext := range pubFiles {
		v, err := LoadEd25519Verifier(testenv.TempFile(t, "pub", ptext))
		if err != nil {
			t.Fatalf("public %s: %v", pn, err)
		}
		for sn, stext := range privFiles {
			k, err := LoadEd25519PrivateKey(testenv.TempFile(t, "priv", stext))
			if err != nil {
				t.Fatalf("private %s: %v", sn, err)
			}
			s, _ := NewEd25519Signer(k)
			sig := s.Sign(msg)
			if err := v.Verify(msg, sig); err != nil {
				t.Errorf("%s/%s: %v", pn, sn, err)
			}
			if err := v.Verify([]byte("cmd2"), sig); !errors.Is(err, ErrBadSignature) {
				t.Errorf("%s/%s changed message: %v", pn, sn, err)
			}
		}
	}
	// A key of another pair does not verify.
	other, _, _ := ed25519.GenerateKey(rand.Reader)
	v, _ := NewEd25519Verifier(other)
	s, _ := NewEd25519Signer(priv)
	if err := v.Verify(msg, s.Sign(msg)); !errors.Is(err, ErrBadSignature) {
		t.Errorf("other key: %v", err)
	}
	// A private key where a public one belongs is refused.
	if _, err := LoadEd25519Verifier(testenv.TempFile(t, "pub", privFiles["pem"])); err == nil {
		t.Error("private PEM accepted as public key")
	}
	if _, err := LoadEd25519PrivateKey(testenv.TempFile(t, "priv", hex.EncodeToString(append(priv.Seed(), other...)))); err == nil {
		t.Error("mismatched seed||public accepted")
	}
}

func TestCheckSignature(t *testing.T) {
	key := make([]byte, 32)
	v, _ := NewHMACVerifier(key)
	s, _ := NewHMACSigner(key)
	msg := []byte("m")
	if err := CheckSignature(v, true, msg, nil); !errors.Is(err, ErrUnsigned) || err.Error() != "unsigned command rejected: signature required" {
		t.Errorf("unsigned, required: %v", err)
	}
	if err := CheckSignature(v, false, msg, nil); err != nil {
		t.Errorf("unsigned, not required: %v", err)
	}
	if err := CheckSignature(v, false, msg, []byte("junk")); !errors.Is(err, ErrBadSignature) || err.Error() != "bad signature" {
		t.Errorf("bad signature while not required: %v", err)
	}
	if err := CheckSignature(v, true, msg, s.Sign(msg)); err != nil {
		t.Errorf("good: %v", err)
	}
	if err := CheckSignature(nil, false, msg, []byte("x")); err != nil {
		t.Errorf("no key: %v", err)
	}
	if err := CheckSignature(nil, true, msg, []byte("x")); err == nil {
		t.Error("required with no key: no error")
	}
}

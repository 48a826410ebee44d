// Package testenv sets up what tests of several packages need: throwaway
// TLS certificates, and a mosquitto broker and nginx instances on loopback.
package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Files are the PEM files Certs made.
type Files struct {
	CA                    string // the CA certificate
	ServerCert, ServerKey string // for 127.0.0.1
	ClientCert, ClientKey string // CommonName client
}

// Certs writes a CA and, signed by it, a server certificate for 127.0.0.1
// and a client certificate for client, valid for an hour, in dir.
func Certs(t testing.TB, dir, client string) Files {
	t.Helper()
	caCert, caKey := issue(t, nil, nil, "edgebench test CA", true)
	f := Files{CA: filepath.Join(dir, "ca.pem")}
	writePEM(t, f.CA, "CERTIFICATE", caCert.Raw)
	f.ServerCert, f.ServerKey = writePair(t, dir, "server", caCert, caKey, "127.0.0.1")
	f.ClientCert, f.ClientKey = writePair(t, dir, "client", caCert, caKey, client)
	return f
}

func writePair(t testing.TB, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string) (certFile, keyFile string) {
	t.Helper()
	cert, key := issue(t, ca, caKey, cn, false)
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	writePEM(t, certFile, "CERTIFICATE", cert.Raw)
	writePEM(t, keyFile, "EC PRIVATE KEY", der)
	return certFile, keyFile
}

func issue(t testing.TB, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, ca bool) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		parent, parentKey = tmpl, key
	}
	if ip := net.ParseIP(cn); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

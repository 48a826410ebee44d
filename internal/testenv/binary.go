package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The binaries built by Binary, once per test process.
var binaries struct {
	sync.Mutex
	dir   string
	built map[string]string // by package
	err   map[string]error
}

// Binary builds the main package pkg (as go build takes it, e.g. "." or
// "../cmd/edgebench") once per test process and returns the binary's
// path. The binaries are removed by RemoveBinaries, which the TestMain of
// a package that uses Binary calls once its tests are over.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	binaries.Lock()
	defer binaries.Unlock()
	if path, ok := binaries.built[pkg]; ok {
		return path
	}
	if err := binaries.err[pkg]; err != nil {
		t.Fatal(err)
	}
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "edgebench-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		binaries.dir, binaries.built, binaries.err = dir, map[string]string{}, map[string]error{}
	}
	abs, err := filepath.Abs(pkg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(binaries.dir, filepath.Base(abs))
	if _, taken := pathUsed(path); taken {
		path += "-" + filepath.Base(filepath.Dir(abs))
	}
	if out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput(); err != nil {
		binaries.err[pkg] = &buildError{pkg: pkg, err: err, out: out}
		t.Fatal(binaries.err[pkg])
	}
	binaries.built[pkg] = path
	return path
}

func pathUsed(path string) (string, bool) {
	for pkg, p := range binaries.built {
		if p == path {
			return pkg, true
		}
	}
	return "", false
}

type buildError struct {
	pkg string
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build " + e.pkg + ": " + e.err.Error() + "\n" + string(e.out)
}

// RemoveBinaries removes what Binary built. Call it from TestMain after
// the tests ran.
func RemoveBinaries() {
	binaries.Lock()
	defer binaries.Unlock()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
		binaries.dir, binaries.built, binaries.err = "", nil, nil
	}
}

package durable

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	for _, s := range []string{"one", "two"} {
		if err := WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		if string(b) != s {
			t.Errorf("got %q want %q", b, s)
		}
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "missing", "f"), nil, 0o600); err == nil {
		t.Error("write into a missing directory: no error")
	}
}

package probe

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestFileReader(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 5000) // 85 KB: the buffer grows
	small := []byte("42\n")
	os.WriteFile(filepath.Join(dir, "big"), big, 0o644)
	os.WriteFile(filepath.Join(dir, "small"), small, 0o644)
	r := newFileReader(dir)
	defer r.close()
	for range 2 { // the second time through the kept descriptors
		if b, err := r.read("big", true); err != nil || !bytes.Equal(b, big) {
			t.Fatalf("big: %d bytes, %v", len(b), err)
		}
		if b, err := r.read("small", true); err != nil || !bytes.Equal(b, small) {
			t.Fatalf("small: %q, %v", b, err)
		}
	}
	// A kept file is re-read from offset 0: a rewrite shows.
	os.WriteFile(filepath.Join(dir, "small"), []byte("7\n"), 0o644)
	if b, _ := r.read("small", true); string(b) != "7\n" {
		t.Errorf("re-read %q", b)
	}
	if _, err := r.read("missing", true); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "huge"), make([]byte, maxFileSize+1), 0o644)
	if _, err := r.read("huge", false); err == nil {
		t.Error("no error past maxFileSize")
	}
}

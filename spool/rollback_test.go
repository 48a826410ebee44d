package spool

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestPutRollsBackEveryFailedWrite makes each step of Put's write fail
// for real (the temporary file cannot be created, the payload cannot be
// written, the file cannot be renamed into place) and checks that the
// failed Put gives back what it reserved: the spool holds what it held,
// its byte and count bounds are whole for the next Put, no temporary file
// is left, and the same id is stored once the fault is gone.
func TestPutRollsBackEveryFailedWrite(t *testing.T) {
	const maxBytes = 1000
	for _, fault := range []struct {
		name  string
		cause func(t *testing.T, dir, id string) (undo func())
	}{
		{"the temporary file exists", func(t *testing.T, dir, id string) func() {
			tmp := filepath.Join(dir, spoolTmp+strconv.Itoa(os.Getpid())+"-"+id)
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(tmp) }
		}},
		{"the payload does not fit the file size limit", func(t *testing.T, dir, id string) func() {
			// A write past RLIMIT_FSIZE fails with EFBIG once SIGXFSZ is ignored.
			signal.Ignore(syscall.SIGXFSZ)
			var old syscall.Rlimit
			if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
				t.Fatal(err)
			}
			lim := old
			lim.Cur = spoolHeader + 10
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
					t.Fatal(err)
				}
				signal.Reset(syscall.SIGXFSZ)
			}
		}},
		{"a directory holds the entry's name", func(t *testing.T, dir, id string) func() {
			p := filepath.Join(dir, id+spoolExt)
			if err := os.MkdirAll(filepath.Join(p, "x"), 0o700); err != nil {
				t.Fatal(err)
			}
			return func() { os.RemoveAll(p) }
		}},
	} {
		t.Run(fault.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Limits{MaxCount: 3, MaxBytes: maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put("kept", make([]byte, 100)); err != nil {
				t.Fatal(err)
			}
			before := s.Stats()
			undo := fault.cause(t, dir, "failing")
			err = s.Put("failing", make([]byte, 400))
			undo()
			if err == nil || errors.Is(err, ErrFull) {
				t.Fatalf("Put under the fault: %v, want a write error", err)
			}
			if st := s.Stats(); st != before {
				t.Errorf("after the failed Put: %+v, want %+v", st, before)
			}
			if s.Has("failing") || len(s.writing) != 0 {
				t.Errorf("the failed entry is listed (%v) or still reserved (%v)", s.Has("failing"), s.writing)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "kept"+spoolExt {
					t.Errorf("left in the spool: %s", e.Name())
				}
			}
			// The room is whole: the failed id, then exactly the bytes
			// and entries that are left.
			if err := s.Put("failing", make([]byte, 400)); err != nil {
				t.Errorf("the same id once the fault is gone: %v", err)
			}
			if err := s.Put("rest", make([]byte, maxBytes-500)); err != nil {
				t.Errorf("the bytes left: %v", err)
			}
			if err := s.Put("over", nil); !errors.Is(err, ErrFull) {
				t.Errorf("one entry over the count: %v, want ErrFull", err)
			}
			if st := s.Stats(); st.Count != 3 || st.Bytes != maxBytes {
				t.Errorf("full spool: %+v, want 3 entries of %d bytes", st, maxBytes)
			}
		})
	}
}

package probe

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxFileSize bounds every read: /proc/stat with thousands of interrupt
// counters stays well under it, and nothing hostile in a fixture tree can
// make the probe allocate more.
const maxFileSize = 1 << 20

// fileReader reads small kernel files below a root. Files it is asked to keep
// open are re-read with pread at offset 0, which makes seq_file (proc) and
// kernfs (sys) generate fresh contents without open and close syscalls.
// It reuses one buffer: the bytes returned are valid until the next read.
type fileReader struct {
	root string
	open map[string]*os.File
	buf  []byte
}

func newFileReader(root string) *fileReader {
	return &fileReader{root: root, open: map[string]*os.File{}, buf: make([]byte, 16<<10)}
}

// path returns rel below the root.
func (r *fileReader) path(rel string) string { return filepath.Join(r.root, rel) }

// read returns the contents of rel. With keep the file stays open for the
// next read. A file that does not exist gives an error matching
// os.ErrNotExist.
func (r *fileReader) read(rel string, keep bool) ([]byte, error) {
	f, cached := r.open[rel]
	if !cached {
		var err error
		f, err = os.Open(r.path(rel))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", r.path(rel), err)
		}
		if keep {
			r.open[rel] = f
		} else {
			defer f.Close()
		}
	}
	b, err := r.readAll(f)
	if err != nil {
		if cached {
			f.Close()
			delete(r.open, rel)
		}
		return nil, fmt.Errorf("read %s: %w", r.path(rel), err)
	}
	return b, nil
}

// readAll reads f from offset 0 into the reused buffer, growing it up to
// maxFileSize.
func (r *fileReader) readAll(f *os.File) ([]byte, error) {
	n := 0
	for {
		m, err := f.ReadAt(r.buf[n:], int64(n))
		n += m
		if errors.Is(err, io.EOF) {
			return r.buf[:n], nil
		}
		if err != nil {
			return nil, err
		}
		if n == len(r.buf) {
			if len(r.buf) >= maxFileSize {
				return nil, fmt.Errorf("larger than %d bytes", maxFileSize)
			}
			nb := make([]byte, 2*len(r.buf))
			copy(nb, r.buf)
			r.buf = nb
		}
	}
}

// forget closes rel if it is kept open.
func (r *fileReader) forget(rel string) {
	if f, ok := r.open[rel]; ok {
		f.Close()
		delete(r.open, rel)
	}
}

// exists reports whether rel exists below the root.
func (r *fileReader) exists(rel string) bool {
	_, err := os.Stat(r.path(rel))
	return err == nil
}

// close closes every kept file.
func (r *fileReader) close() error {
	var errs []error
	for rel, f := range r.open {
		errs = append(errs, f.Close())
		delete(r.open, rel)
	}
	return errors.Join(errs...)
}

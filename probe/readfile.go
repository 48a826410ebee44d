package probe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
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
	open map[string]*keptFile
	buf  []byte
}

// keptFile is an open kernel file and its descriptor, read with pread
// directly: os.File.ReadAt would always make one more call to see EOF.
type keptFile struct {
	f  *os.File
	fd int
}

func newFileReader(root string) *fileReader {
	return &fileReader{root: root, open: map[string]*keptFile{}, buf: make([]byte, 16<<10)}
}

// path returns rel below the root.
func (r *fileReader) path(rel string) string { return filepath.Join(r.root, rel) }

// read returns the contents of rel. With keep the file stays open for the
// next read. A file that does not exist gives an error matching
// os.ErrNotExist.
func (r *fileReader) read(rel string, keep bool) ([]byte, error) {
	kf, cached := r.open[rel]
	if !cached {
		f, err := os.Open(r.path(rel))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", r.path(rel), err)
		}
		// Fd puts the file in blocking mode: kernel files are not pollable,
		// so they are blocking already.
		kf = &keptFile{f: f, fd: int(f.Fd())}
		if keep {
			r.open[rel] = kf
		} else {
			defer f.Close()
		}
	}
	b, err := r.readAll(kf.fd)
	if err != nil {
		if cached {
			kf.f.Close()
			delete(r.open, rel)
		}
		return nil, fmt.Errorf("read %s: %w", r.path(rel), err)
	}
	return b, nil
}

// shortRead is the size under which one read is known to be the whole
// file. proc's seq_file hands out at most a page per read, but it stops
// short of a full page only when the next record (a line, well under 2 KiB)
// would not fit, or at the end; sysfs attributes come in one read. Skipping
// the read that would return 0 saves a syscall per file per sample.
const shortRead = 2048

// readAll reads f from offset 0 into the reused buffer, growing it up to
// maxFileSize.
func (r *fileReader) readAll(fd int) ([]byte, error) {
	n := 0
	for {
		m, err := syscall.Pread(fd, r.buf[n:], int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		n += m
		if m == 0 || (n == m && m < shortRead) {
			return r.buf[:n], nil
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
	if kf, ok := r.open[rel]; ok {
		kf.f.Close()
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
	for rel, kf := range r.open {
		errs = append(errs, kf.f.Close())
		delete(r.open, rel)
	}
	return errors.Join(errs...)
}

package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/edgebench/edgebench/internal/durable"
	"github.com/edgebench/edgebench/wire"
)

// Spool defaults, chosen for an SD card: a few thousand results at most.
const (
	DefaultCount = 1000
	DefaultBytes = 64 << 20
	maxTornKept  = 16 // files kept in torn/ and in rejected/
)

// ErrFull is returned by Put when the spool is at its bounds: the
// oldest entries are kept and the new one refused.
var ErrFull = errors.New("spool full")

// ErrNotSpooled is returned for an id the spool does not hold.
var ErrNotSpooled = errors.New("not in the spool")

// Limits bound a spool. Zero fields take the defaults.
type Limits struct {
	MaxCount int   // entries
	MaxBytes int64 // payload bytes

	// OnTorn, when set, is told of each file moved to torn/ (by Open as
	// well as later), with why: the owner logs it. It must not call the
	// spool.
	OnTorn func(name, reason string)
}

// Stats describe a spool at one instant.
type Stats struct {
	Count    int   // entries waiting for an ack
	Bytes    int64 // their payload bytes
	Refused  int64 // Puts refused because the spool was full, since open
	Torn     int64 // damaged or half-written files set aside, since open
	Rejected int64 // entries moved to rejected/ by Reject, since open
}

// Spool is a directory of payloads waiting for the collector's ack. Each
// entry is one file, <id>.msg: a 12-byte header (magic "EBS1", payload
// length, CRC-32C of the payload, big-endian) and the payload. Put writes
// a temporary file, fsyncs it, renames it into place and fsyncs the
// directory, so an entry is either whole or absent after a crash; a file
// that is damaged anyway, or a temporary file left by a killed writer, is
// moved to torn/ and never sent; an entry that can never be delivered is
// moved to rejected/ (Reject). Each keeps its newest few files, for a look.
// Safe for concurrent use; several
// processes may share a directory (ids are unique and removal idempotent).
type Spool struct {
	dir string
	lim Limits

	mu       sync.Mutex
	sizes    map[string]int64
	writing  map[string]bool // reserved by a Put whose file is not in place yet
	bytes    int64
	refused  int64
	torn     int64
	rejected int64
}

const (
	spoolExt    = ".msg"
	spoolTmp    = ".tmp-"
	spoolHeader = 12
)

var (
	spoolMagic = [4]byte{'E', 'B', 'S', '1'}
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// Open opens (creating it if needed) the spool in dir, checks every
// entry and sets aside the damaged ones and the temporary files of writers
// that are gone.
func Open(dir string, lim Limits) (*Spool, error) {
	if lim.MaxCount <= 0 {
		lim.MaxCount = DefaultCount
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultBytes
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	s := &Spool{dir: dir, lim: lim, sizes: map[string]int64{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		if strings.HasPrefix(name, spoolTmp) {
			if !writerAlive(name) {
				if err := s.setAside(name, "the temporary file of a writer that is gone"); err != nil {
					return nil, err
				}
			}
			continue
		}
		id, ok := strings.CutSuffix(name, spoolExt)
		if !ok || wire.ValidMessageID(id) != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("spool %s: %w", dir, err)
		}
		p, err := unframe(b)
		if err == nil {
			err = sameID(id, p)
		}
		if err != nil {
			if err := s.setAside(name, err.Error()); err != nil {
				return nil, err
			}
			continue
		}
		s.sizes[id] = int64(len(b) - spoolHeader)
		s.bytes += int64(len(b) - spoolHeader)
	}
	return s, nil
}

// Dir is the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// Put stores payload under id durably. An id already spooled is left as
// it is. A full spool refuses the new entry with ErrFull.
func (s *Spool) Put(id string, payload []byte) error {
	if err := wire.ValidMessageID(id); err != nil {
		return fmt.Errorf("spool put: %w", err)
	}
	s.mu.Lock()
	if _, ok := s.sizes[id]; ok {
		s.mu.Unlock()
		return nil
	}
	n := int64(len(payload))
	if len(s.sizes)+1 > s.lim.MaxCount || s.bytes+n > s.lim.MaxBytes {
		s.refused++
		count, bytes := len(s.sizes), s.bytes
		s.mu.Unlock()
		return fmt.Errorf("spool %s: result %s (%d bytes) refused: %d entries, %d bytes held, limits %d entries, %d bytes: %w",
			s.dir, id, n, count, bytes, s.lim.MaxCount, s.lim.MaxBytes, ErrFull)
	}
	// Reserve the room, so concurrent Puts cannot overshoot the bounds;
	// List leaves the entry out until its file is in place, or a replay
	// would find no file and forget the entry.
	s.sizes[id] = n
	s.bytes += n
	if s.writing == nil {
		s.writing = map[string]bool{}
	}
	s.writing[id] = true
	s.mu.Unlock()

	err := s.write(id, payload)
	s.mu.Lock()
	delete(s.writing, id)
	if err != nil {
		delete(s.sizes, id)
		s.bytes -= n
	}
	s.mu.Unlock()
	return err
}

func (s *Spool) write(id string, payload []byte) error {
	tmp := filepath.Join(s.dir, spoolTmp+strconv.Itoa(os.Getpid())+"-"+id)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return fmt.Errorf("spool write %s: %w", id, err)
	}
	var hdr [spoolHeader]byte
	copy(hdr[:], spoolMagic[:])
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(payload)))
	binary.BigEndian.PutUint32(hdr[8:], crc32.Checksum(payload, castagnoli))
	_, err = f.Write(hdr[:])
	if err == nil {
		_, err = f.Write(payload)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.dir, id+spoolExt))
	}
	if err == nil {
		err = durable.SyncDir(s.dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("spool write %s: %w", id, err)
	}
	return nil
}

// Get reads the payload spooled under id. A damaged entry is set aside and
// reported as ErrNotSpooled.
func (s *Spool) Get(id string) ([]byte, error) {
	if err := wire.ValidMessageID(id); err != nil {
		return nil, fmt.Errorf("spool get: %w", err)
	}
	name := id + spoolExt
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		s.forget(id)
		return nil, fmt.Errorf("spool get %s: %w", id, ErrNotSpooled)
	}
	if err != nil {
		return nil, fmt.Errorf("spool get %s: %w", id, err)
	}
	p, err := unframe(b)
	if err == nil {
		err = sameID(id, p)
	}
	if err != nil {
		s.forget(id)
		if aerr := s.setAside(name, err.Error()); aerr != nil {
			return nil, aerr
		}
		return nil, fmt.Errorf("spool get %s: %v: %w", id, err, ErrNotSpooled)
	}
	return p, nil
}

// List returns the spooled ids in order: ULIDs sort by creation time, so
// the oldest comes first.
func (s *Spool) List() []string {
	s.mu.Lock()
	ids := make([]string, 0, len(s.sizes))
	for id := range s.sizes {
		if !s.writing[id] {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	sort.Strings(ids)
	return ids
}

// Has reports whether id is spooled.
func (s *Spool) Has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sizes[id]
	return ok
}

// Remove deletes the entry for id, once the collector has acknowledged it.
// Removing an id that is not spooled is not an error.
func (s *Spool) Remove(id string) error {
	if err := wire.ValidMessageID(id); err != nil {
		return fmt.Errorf("spool remove: %w", err)
	}
	err := os.Remove(filepath.Join(s.dir, id+spoolExt))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool remove %s: %w", id, err)
	}
	s.forget(id)
	if err == nil {
		if err := durable.SyncDir(s.dir); err != nil {
			return fmt.Errorf("spool remove %s: %w", id, err)
		}
	}
	return nil
}

// Reject moves the entry for id out of the spool into rejected/, where
// the newest few are kept: the collector refused it for good, or it cannot
// be sent at all. An id that is not spooled is not an error.
func (s *Spool) Reject(id string) error {
	if err := wire.ValidMessageID(id); err != nil {
		return fmt.Errorf("spool reject: %w", err)
	}
	moved, err := s.moveAside("rejected", id+spoolExt)
	if err != nil {
		return err
	}
	s.forget(id)
	if moved {
		s.mu.Lock()
		s.rejected++
		s.mu.Unlock()
	}
	return nil
}

// Stats returns the spool's counts.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Count: len(s.sizes), Bytes: s.bytes, Refused: s.refused, Torn: s.torn, Rejected: s.rejected}
}

func (s *Spool) forget(id string) {
	s.mu.Lock()
	if n, ok := s.sizes[id]; ok {
		delete(s.sizes, id)
		s.bytes -= n
	}
	s.mu.Unlock()
}

// setAside moves a damaged file into torn/, and tells Limits.OnTorn why.
func (s *Spool) setAside(name, reason string) error {
	moved, err := s.moveAside("torn", name)
	if moved {
		s.mu.Lock()
		s.torn++
		s.mu.Unlock()
		if s.lim.OnTorn != nil {
			s.lim.OnTorn(name, reason)
		}
	}
	return err
}

// sameID checks that the payload of the entry id is the result its name
// says: one that is another's would be acked under the other id and
// stay in the spool for ever. A payload whose id cannot be read is left
// to the sender, who sets it aside as unsendable.
func sameID(id string, payload []byte) error {
	if got := wire.PeekID(payload); got != "" && got != id {
		return fmt.Errorf("holds result %s, not %s as its name says", got, id)
	}
	return nil
}

// moveAside moves file name of the spool into the folder sub, keeping the
// newest few there; it reports whether there was a file to move.
func (s *Spool) moveAside(sub, name string) (bool, error) {
	aside := filepath.Join(s.dir, sub)
	if err := os.MkdirAll(aside, 0o750); err != nil {
		return false, fmt.Errorf("spool set aside %s: %w", name, err)
	}
	if err := os.Rename(filepath.Join(s.dir, name), filepath.Join(aside, name)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // another process got there first
		}
		return false, fmt.Errorf("spool set aside %s: %w", name, err)
	}
	if ents, err := os.ReadDir(aside); err == nil && len(ents) > maxTornKept {
		type aged struct {
			name string
			mod  int64
		}
		var all []aged
		for _, e := range ents {
			if info, err := e.Info(); err == nil {
				all = append(all, aged{e.Name(), info.ModTime().UnixNano()})
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].mod < all[j].mod })
		for _, a := range all[:max(0, len(all)-maxTornKept)] {
			os.Remove(filepath.Join(aside, a.name))
		}
	}
	return true, durable.SyncDir(s.dir)
}

// unframe checks a spool file and returns its payload.
func unframe(b []byte) ([]byte, error) {
	if len(b) < spoolHeader || [4]byte(b[:4]) != spoolMagic {
		return nil, errors.New("bad header")
	}
	n := binary.BigEndian.Uint32(b[4:])
	if uint64(len(b)-spoolHeader) != uint64(n) {
		return nil, fmt.Errorf("%d payload bytes, header says %d", len(b)-spoolHeader, n)
	}
	p := b[spoolHeader:]
	if crc32.Checksum(p, castagnoli) != binary.BigEndian.Uint32(b[8:]) {
		return nil, errors.New("checksum mismatch")
	}
	return p, nil
}

// writerAlive reports whether the process that named a temporary file
// .tmp-<pid>-<id> still runs (it may share the spool), so its file is not
// torn from under it.
func writerAlive(name string) bool {
	rest := strings.TrimPrefix(name, spoolTmp)
	pidStr, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false // our own leftovers from a failed write
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

package collector

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

// TestOpenStoreConcurrently: the collector and a reading command opening
// a new store at once both bring it up to date, once.
func TestOpenStoreConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := OpenStore(context.Background(), path)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

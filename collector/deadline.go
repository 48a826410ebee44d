package collector

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/edgebench/edgebench/collector/store/sqldb"
)

// Every call the collector makes to its store has a deadline: a database
// that stops answering (a hung PostgreSQL, a SQLite file on a dead disk)
// costs a call this long, counts as unavailable (ingest holds what comes
// in and tries again), and never keeps the collector from stopping.
const (
	defaultStoreTimeout = 30 * time.Second
	// Pruning a large store is one long statement per table.
	pruneTimeout = 10 * time.Minute
)

// storeCall runs f with a context that ends after timeout. A call that
// reaches its deadline while ctx still runs is ErrUnavailable: the same
// call may succeed once the database answers again.
func storeCall(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := f(cctx)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil && !sqldb.Unavailable(err) {
		err = sqldb.AsUnavailable(fmt.Errorf("the store did not answer within %v: %w", timeout, err))
	}
	return err
}

// withStoreDeadline gives each web page and API request a deadline,
// which its store calls inherit.
func withStoreDeadline(h http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

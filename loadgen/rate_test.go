//go:build linux

package loadgen

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRunRefusesRatesItCannotSchedule: a rate whose interval between
// requests overflows (1e-300 went to full speed on amd64 and to no request
// at all on arm64), or that is no number, is a configuration error, the
// same on every architecture.
func TestRunRefusesRatesItCannotSchedule(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, rate := range []float64{1e-300, 5e-324, MinRate / 2, math.NaN(), math.Inf(1), math.Inf(-1), -1} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := Run(ctx, Config{URL: srv.URL + "/", Rate: rate, Requests: 3, Connections: 1})
		cancel()
		if !errors.Is(err, ErrConfig) {
			completed := int64(-1)
			if res != nil {
				completed = res.Completed
			}
			t.Errorf("rate %v: error %v (completed %d), want a configuration error", rate, err, completed)
		}
	}
	res, err := Run(context.Background(), Config{URL: srv.URL + "/", Rate: 1e6, Requests: 3, Connections: 1})
	if err != nil || res.Completed != 3 {
		t.Errorf("rate 1e6: %v, %+v", err, res)
	}
}

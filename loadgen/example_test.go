//go:build linux

package loadgen_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/edgebench/edgebench/loadgen"
)

// Run sends 200 requests over 4 keep-alive connections and says what the
// measured window saw; report.WriteText, WriteAB or WriteWrk would print
// the whole report.
func ExampleRun() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	res, err := loadgen.Run(context.Background(), loadgen.Config{
		URL: srv.URL + "/", Connections: 4, Requests: 200, KeepAlive: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("completed:", res.Completed, "ok:", res.OK, "failed:", res.Failed())
	fmt.Println("connections opened:", res.Connects)
	fmt.Println("latencies recorded:", res.Latency.Count())
	fmt.Println("body bytes:", res.BodyBytes)
	// Output:
	// completed: 200 ok: 200 failed: 0
	// connections opened: 4
	// latencies recorded: 200
	// body bytes: 1000
}

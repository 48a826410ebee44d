// Package summary cuts a result's payload, its msgpack as the device
// sent it, to its summary (Of): the same bytes without the bulk that
// --keep-samples prunes, each run's timeline, histograms and probe
// samples. Pure: the store keeps both and prunes the bulk.
package summary

// Package group says what the collector groups runs by. A run's Spec is
// the work it asked of the server (request, connections, keep-alive,
// rate, protocol, TLS...): runs of different specs are different
// experiments, never pooled. A comparison's --by key (Resolve) names a
// run label, a system-info field of the device (SystemFields) or a part
// of the spec. The store, which groups the runs in SQL, and compare,
// which builds the tables, both read these rules here.
package group

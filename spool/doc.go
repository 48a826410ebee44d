// Package spool is a device's on-disk queue of results waiting for the
// collector's acknowledgement: one file per result, written whole or not
// at all (fsync, rename, fsync of the directory), bounded in count and
// bytes, with damaged files set aside in torn/ and results the collector
// refused for good in rejected/. The MQTT client (package transport)
// publishes what it holds on every connect and removes an entry when its
// ack comes.
//
//	sp, err := spool.Open("/var/lib/edgebench/spool", spool.Limits{})
//	err = sp.Put(res.ID, payload)     // ErrFull at its bounds
//	ids := sp.List()                  // oldest first
//	err = sp.Remove(id)               // acknowledged
package spool

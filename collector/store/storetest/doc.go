// Package storetest is what the tests of the store and of the packages
// over it share: results made up with known figures (FakeResult), a new
// store of each engine (EachEngine, Engine.Open: SQLite, and a real
// PostgreSQL that internal/testenv starts), and stores seeded for the
// comparisons (SeedCompare).
package storetest

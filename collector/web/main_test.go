package web

import (
	"testing"

	"github.com/edgebench/edgebench/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

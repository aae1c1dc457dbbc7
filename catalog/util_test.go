package catalog_test

import (
	"bytes"
	"errors"
	"io"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

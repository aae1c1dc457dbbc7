package strong

import (
	"errors"

	"github.com/cairnstore/cairn/objstore"
)

func objstoreDelete() objstore.DeleteOptions { return objstore.DeleteOptions{} }

// errAny marks a step that must fail, with any error.
var errAny = errors.New("any error")

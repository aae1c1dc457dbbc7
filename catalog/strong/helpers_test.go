package strong

import "github.com/cairnstore/cairn/objstore"

func objstoreDelete() objstore.DeleteOptions { return objstore.DeleteOptions{} }

// Package httpx holds the small HTTP pieces every HTTP face shares (a
// face may not import another): the response recorder behind their
// access logs and metrics.
package httpx

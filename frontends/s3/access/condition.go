package access

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Condition is one operator applied to one key of a statement's
// Condition block.
type Condition struct {
	Op       string // base operator, e.g. "StringLike"
	Key      string // canonical (canonicalKey)
	AnyValue bool   // ForAnyValue:
	AllValue bool   // ForAllValues:
	IfExists bool   // ...IfExists
	Values   []string

	base   baseOp
	negate bool
	nets   []*net.IPNet
	nums   []float64
	times  []time.Time
}

type baseOp int

const (
	opStringEquals baseOp = iota
	opStringEqualsIgnoreCase
	opStringLike
	opNumericEquals
	opNumericLess
	opNumericLessEq
	opNumericGreater
	opNumericGreaterEq
	opDateEquals
	opDateLess
	opDateLessEq
	opDateGreater
	opDateGreaterEq
	opBool
	opBinaryEquals
	opIPAddress
	opArnEquals
	opArnLike
	opNull
)

var operators = map[string]struct {
	base   baseOp
	negate bool
}{
	"StringEquals": {opStringEquals, false}, "StringNotEquals": {opStringEquals, true},
	"StringEqualsIgnoreCase": {opStringEqualsIgnoreCase, false}, "StringNotEqualsIgnoreCase": {opStringEqualsIgnoreCase, true},
	"StringLike": {opStringLike, false}, "StringNotLike": {opStringLike, true},
	"NumericEquals": {opNumericEquals, false}, "NumericNotEquals": {opNumericEquals, true},
	"NumericLessThan": {opNumericLess, false}, "NumericLessThanEquals": {opNumericLessEq, false},
	"NumericGreaterThan": {opNumericGreater, false}, "NumericGreaterThanEquals": {opNumericGreaterEq, false},
	"DateEquals": {opDateEquals, false}, "DateNotEquals": {opDateEquals, true},
	"DateLessThan": {opDateLess, false}, "DateLessThanEquals": {opDateLessEq, false},
	"DateGreaterThan": {opDateGreater, false}, "DateGreaterThanEquals": {opDateGreaterEq, false},
	"Bool": {opBool, false}, "BinaryEquals": {opBinaryEquals, false},
	"IpAddress": {opIPAddress, false}, "NotIpAddress": {opIPAddress, true},
	"ArnEquals": {opArnEquals, false}, "ArnNotEquals": {opArnEquals, true},
	"ArnLike": {opArnLike, false}, "ArnNotLike": {opArnLike, true},
	"Null": {opNull, false},
}

func parseCondition(op, key string, raw json.RawMessage) (Condition, error) {
	c := Condition{Key: canonicalKey(key)}
	name := op
	if rest, ok := strings.CutPrefix(name, "ForAnyValue:"); ok {
		c.AnyValue, name = true, rest
	} else if rest, ok := strings.CutPrefix(name, "ForAllValues:"); ok {
		c.AllValue, name = true, rest
	}
	if rest, ok := strings.CutSuffix(name, "IfExists"); ok && rest != "Null" {
		c.IfExists, name = true, rest
	}
	o, ok := operators[name]
	if !ok {
		return c, fmt.Errorf("unknown condition operator %q", op)
	}
	if key == "" {
		return c, errors.New("empty condition key")
	}
	c.Op, c.base, c.negate = name, o.base, o.negate
	vals, err := conditionValues(raw)
	if err != nil {
		return c, fmt.Errorf("condition %s %s: %v", op, key, err)
	}
	c.Values = vals
	for _, v := range vals {
		switch c.base {
		case opNumericEquals, opNumericLess, opNumericLessEq, opNumericGreater, opNumericGreaterEq:
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return c, fmt.Errorf("condition %s %s: %q is not a number", op, key, v)
			}
			c.nums = append(c.nums, n)
		case opDateEquals, opDateLess, opDateLessEq, opDateGreater, opDateGreaterEq:
			t, err := parseDate(v)
			if err != nil {
				return c, fmt.Errorf("condition %s %s: %q is not a date", op, key, v)
			}
			c.times = append(c.times, t)
		case opIPAddress:
			n, err := parseCIDR(v)
			if err != nil {
				return c, fmt.Errorf("condition %s %s: %q is not an IP address or CIDR block", op, key, v)
			}
			c.nets = append(c.nets, n)
		case opBool, opNull:
			if lv := strings.ToLower(v); lv != "true" && lv != "false" {
				return c, fmt.Errorf("condition %s %s: %q is not true or false", op, key, v)
			}
		}
	}
	return c, nil
}

// conditionValues reads a condition's value: a string, number or bool, or
// a list of them.
func conditionValues(raw json.RawMessage) ([]string, error) {
	var list []any
	if err := json.Unmarshal(raw, &list); err != nil {
		var one any
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, err
		}
		list = []any{one}
	}
	if len(list) == 0 {
		return nil, errors.New("no value")
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case float64:
			out = append(out, strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			out = append(out, strconv.FormatBool(v))
		default:
			return nil, fmt.Errorf("value %v is not a string, number or bool", v)
		}
	}
	return out, nil
}

func parseDate(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), nil // epoch seconds, as aws:EpochTime
	}
	return time.Time{}, errors.New("bad date")
}

func parseCIDR(v string) (*net.IPNet, error) {
	if !strings.Contains(v, "/") {
		ip := net.ParseIP(v)
		if ip == nil {
			return nil, errors.New("bad IP")
		}
		bits := 128
		if ip.To4() != nil {
			ip, bits = ip.To4(), 32
		}
		return &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}, nil
	}
	_, n, err := net.ParseCIDR(v)
	return n, err
}

// eval applies the condition to the request.
func (c *Condition) eval(r *Request) bool {
	if c.base == opNull {
		_, present := r.lookup(c.Key)
		want := strings.EqualFold(c.Values[0], "true") // Null true: the key is absent
		return present != want
	}
	vals, ok := r.lookup(c.Key)
	if !ok || len(vals) == 0 {
		switch {
		case c.IfExists, c.AllValue:
			return true
		case c.AnyValue:
			return false
		}
		return c.negate // a negated operator on an absent key holds
	}
	switch {
	case c.AllValue:
		for _, v := range vals {
			if c.one(v) == c.negate {
				return false
			}
		}
		return true
	case c.AnyValue:
		for _, v := range vals {
			if c.one(v) != c.negate {
				return true
			}
		}
		return false
	}
	for _, v := range vals {
		if c.one(v) {
			return !c.negate
		}
	}
	return c.negate
}

// one reports whether the context value v matches any of the condition's
// values under the base (not negated) operator.
func (c *Condition) one(v string) bool {
	switch c.base {
	case opStringEquals, opArnEquals, opBinaryEquals:
		for _, p := range c.Values {
			if p == v {
				return true
			}
		}
	case opStringEqualsIgnoreCase:
		for _, p := range c.Values {
			if strings.EqualFold(p, v) {
				return true
			}
		}
	case opStringLike, opArnLike:
		for _, p := range c.Values {
			if wildcard(p, v) {
				return true
			}
		}
	case opBool:
		for _, p := range c.Values {
			if strings.EqualFold(p, v) {
				return true
			}
		}
	case opIPAddress:
		ip := net.ParseIP(v)
		if ip == nil {
			return false
		}
		for _, n := range c.nets {
			if n.Contains(ip) {
				return true
			}
		}
	case opNumericEquals, opNumericLess, opNumericLessEq, opNumericGreater, opNumericGreaterEq:
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return false
		}
		for _, n := range c.nums {
			if compare(c.base-opNumericEquals, x, n) {
				return true
			}
		}
	case opDateEquals, opDateLess, opDateLessEq, opDateGreater, opDateGreaterEq:
		t, err := parseDate(v)
		if err != nil {
			return false
		}
		x := float64(t.UnixNano())
		for _, n := range c.times {
			if compare(c.base-opDateEquals, x, float64(n.UnixNano())) {
				return true
			}
		}
	}
	return false
}

// compare applies the k-th comparison (=, <, <=, >, >=) to x and y.
func compare(k baseOp, x, y float64) bool {
	switch k {
	case 0:
		return x == y
	case 1:
		return x < y
	case 2:
		return x <= y
	case 3:
		return x > y
	case 4:
		return x >= y
	}
	return false
}

// narrows reports whether the condition pins a statement with a public
// principal to known callers (AWS's definition of a non-public policy).
func (c *Condition) narrows() bool {
	if c.negate || c.IfExists || c.base == opNull {
		return false
	}
	switch c.Key {
	case "aws:sourceip":
		for _, n := range c.nets {
			if ones, bits := n.Mask.Size(); bits == 32 && ones < 8 || bits == 128 && ones < 32 {
				return false
			}
		}
		return c.base == opIPAddress
	case "aws:sourcearn", "aws:sourcevpc", "aws:sourcevpce", "aws:sourceaccount", "aws:sourceowner",
		"aws:principalorgid", "aws:principalaccount", "aws:principalarn", "aws:userid", "s3:dataaccesspointarn":
		for _, v := range c.Values {
			if hasWildcard(v) {
				return false
			}
		}
		return true
	}
	return false
}

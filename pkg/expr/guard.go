package expr

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/functions"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// Limits on what one CEL call may make. cel-go's cost tracker charges a call after it returns,
// so a call that allocates in proportion to an argument (lists.range(n), s.replace("", t),
// l.join(sep), l.flatten() over a list that holds one list many times) has allocated before
// any limit is looked at; lists.range(50000000) alone took 4.2 GB. Every such call is checked
// before it runs, from its arguments alone, against these limits, and refused with
// ErrCostLimitExceeded when what it would make is over them (DESIGN §12).
const (
	// CELMaxListSize is the most elements a call may put in the list it makes (lists.range,
	// split, flatten, list concatenation, indexes). It is the Job API's limit on the completions
	// of an Indexed Job, so every index set fits. A list of this size of ints takes about 2.4 MB.
	CELMaxListSize = 100_000
	// CELMaxStringSize is the most bytes a call may put in the string or bytes it makes (string
	// concatenation, replace, join, format, quote). A condition message is a few hundred bytes;
	// the largest object the API server stores is 1.5 MiB.
	CELMaxStringSize = 1 << 20
	// CELMaxRegexSize is the most instructions a regular expression may compile to. Go's regexp
	// accepts up to about 3.3 million (128 MB of program) from a pattern of a few hundred bytes
	// such as (?:a{1000}){1000}; Kubernetes' own patterns compile to hundreds.
	CELMaxRegexSize = 50_000
)

// limitError is a call refused because what it would make is over one of the limits above.
// cel-go carries it as the call's error value; run turns it into an ExpressionError with
// ErrCostLimitExceeded.
type limitError struct{ detail string }

func (e *limitError) Error() string { return e.detail }

// refuse returns the limit error for call, e.g. "lists.range(50000000) would make a list of
// 50000000 elements, over the limit of 100000".
func refuse(call string, what string, size uint64, unit string, limit uint64) error {
	return &limitError{detail: fmt.Sprintf("%s would make %s of %d %s, over the limit of %d", call, what, size, unit, limit)}
}

// guard checks a call's arguments before the call runs and returns a *limitError when it must
// not run.
type guard func(args []ref.Val) error

// guards are the checks by function name. A function is here when what it makes, or the time
// it takes, grows faster than its arguments: the tracker would charge it only afterwards.
// Functions whose result is no larger than their receiver (lowerAscii, trim, substring, slice,
// reverse, ...) need no guard: their input was already charged when it was made, or is part of
// the object.
var guards = map[string]guard{
	"_+_":                   guardAdd,
	"lists.range":           guardRange,
	"replace":               guardReplace,
	"split":                 guardSplit,
	"join":                  guardJoin,
	"strings.quote":         guardQuote,
	"format":                guardFormat,
	"flatten":               guardFlatten,
	"sort":                  guardSelfCompare("sort"),
	"distinct":              guardSelfCompare("distinct"),
	"@sortByAssociatedKeys": guardSelfCompare("sortBy"),
	"sets.contains":         guardCrossCompare("sets.contains"),
	"sets.equivalent":       guardCrossCompare("sets.equivalent"),
	"sets.intersects":       guardCrossCompare("sets.intersects"),
	"quantity":              guardQuantity,
	"matches":               guardRegex(1),
	"find":                  guardRegex(1),
	"findAll":               guardRegex(1),
}

func guardAdd(args []ref.Val) error {
	if len(args) != 2 {
		return nil
	}
	switch l := args[0].(type) {
	case types.String:
		if r, ok := args[1].(types.String); ok && uint64(len(l))+uint64(len(r)) > CELMaxStringSize {
			return refuse("string concatenation", "a string", uint64(len(l))+uint64(len(r)), "bytes", CELMaxStringSize)
		}
	case types.Bytes:
		if r, ok := args[1].(types.Bytes); ok && uint64(len(l))+uint64(len(r)) > CELMaxStringSize {
			return refuse("bytes concatenation", "bytes", uint64(len(l))+uint64(len(r)), "bytes", CELMaxStringSize)
		}
	case traits.Lister:
		if r, ok := args[1].(traits.Lister); ok {
			if n := sizeOf(l) + sizeOf(r); n > CELMaxListSize {
				return refuse("list concatenation", "a list", n, "elements", CELMaxListSize)
			}
		}
	}
	return nil
}

func guardRange(args []ref.Val) error {
	if n, ok := args[0].(types.Int); ok && n > CELMaxListSize {
		return refuse(fmt.Sprintf("lists.range(%d)", n), "a list", uint64(n), "elements", CELMaxListSize)
	}
	return nil
}

// guardReplace bounds s.replace(old, new[, n]): every replaced occurrence grows s by
// len(new)-len(old), and an empty old matches before every rune and at the end.
func guardReplace(args []ref.Val) error {
	if len(args) < 3 {
		return nil
	}
	s, ok1 := args[0].(types.String)
	old, ok2 := args[1].(types.String)
	repl, ok3 := args[2].(types.String)
	if !ok1 || !ok2 || !ok3 || len(repl) <= len(old) {
		return nil
	}
	count := occurrences(string(s), string(old))
	if len(args) == 4 {
		if n, ok := args[3].(types.Int); ok && n >= 0 && uint64(n) < count {
			count = uint64(n)
		}
	}
	if size := uint64(len(s)) + count*uint64(len(repl)-len(old)); size > CELMaxStringSize {
		return refuse("replace", "a string", size, "bytes", CELMaxStringSize)
	}
	return nil
}

// occurrences is how many times strings.Replace and strings.Split find sep in s, without
// allocating.
func occurrences(s, sep string) uint64 {
	if sep == "" {
		return uint64(utf8.RuneCountInString(s)) + 1
	}
	return uint64(strings.Count(s, sep))
}

func guardSplit(args []ref.Val) error {
	s, ok1 := args[0].(types.String)
	sep, ok2 := args[1].(types.String)
	if !ok1 || !ok2 {
		return nil
	}
	pieces := occurrences(string(s), string(sep))
	if sep != "" {
		pieces++
	}
	if len(args) == 3 {
		if n, ok := args[2].(types.Int); ok && n >= 0 && uint64(n) < pieces {
			pieces = uint64(n)
		}
	}
	if pieces > CELMaxListSize {
		return refuse("split", "a list", pieces, "elements", CELMaxListSize)
	}
	return nil
}

// guardJoin bounds l.join([sep]): the list may hold one long string many times, and the
// separator is repeated between every two elements.
func guardJoin(args []ref.Val) error {
	l, ok := args[0].(traits.Lister)
	if !ok {
		return nil
	}
	n := sizeOf(l)
	var size uint64
	if len(args) == 2 {
		if sep, ok := args[1].(types.String); ok && n > 0 {
			size = (n - 1) * uint64(len(sep))
		}
	}
	for i := range n {
		if s, ok := l.Get(types.Int(i)).(types.String); ok {
			size += uint64(len(s))
		}
		if size > CELMaxStringSize {
			break
		}
	}
	if size > CELMaxStringSize {
		return refuse("join", "a string", size, "bytes", CELMaxStringSize)
	}
	return nil
}

// guardQuote bounds strings.quote(s): every byte becomes at most three (an invalid byte becomes
// the three bytes of U+FFFD), plus the quotes.
func guardQuote(args []ref.Val) error {
	if s, ok := args[0].(types.String); ok {
		if size := 3*uint64(len(s)) + 2; size > CELMaxStringSize {
			return refuse("strings.quote", "a string", size, "bytes", CELMaxStringSize)
		}
	}
	return nil
}

// guardFormat bounds format.format(args): the format text, plus what each argument can print
// as, plus the widest precision a verb asks for once per argument (%.999999999f would print a
// billion digits).
func guardFormat(args []ref.Val) error {
	if len(args) != 2 {
		return nil
	}
	f, ok1 := args[0].(types.String)
	l, ok2 := args[1].(traits.Lister)
	if !ok1 || !ok2 {
		return nil
	}
	precision := maxPrecision(string(f))
	size := uint64(len(f))
	for i := range sizeOf(l) {
		size += printedSize(l.Get(types.Int(i)), CELMaxStringSize) + precision
		if size > CELMaxStringSize {
			return refuse("format", "a string", size, "bytes", CELMaxStringSize)
		}
	}
	return nil
}

// maxPrecision is the largest precision (%.N) in a format text, saturating well above the limit.
func maxPrecision(f string) uint64 {
	var widest uint64
	for i := 0; i+1 < len(f); i++ {
		if f[i] != '%' || f[i+1] != '.' {
			continue
		}
		var n uint64
		for j := i + 2; j < len(f) && f[j] >= '0' && f[j] <= '9'; j++ {
			n = min(n*10+uint64(f[j]-'0'), 2*CELMaxStringSize)
		}
		widest = max(widest, n)
	}
	return widest
}

// printedSize is an upper bound of the bytes v prints as in format, counted up to limit.
func printedSize(v ref.Val, limit uint64) uint64 {
	switch x := v.(type) {
	case types.String:
		return uint64(len(x)) + 2
	case types.Bytes:
		return 2*uint64(len(x)) + 2 // %x prints two digits a byte
	case traits.Lister:
		size := uint64(2)
		for i := range sizeOf(x) {
			size += printedSize(x.Get(types.Int(i)), limit) + 2
			if size > limit {
				break
			}
		}
		return size
	case traits.Mapper:
		size := uint64(2)
		for it := x.Iterator(); it.HasNext() == types.True && size <= limit; {
			k := it.Next()
			size += printedSize(k, limit) + printedSize(x.Get(k), limit) + 4
		}
		return size
	}
	return 64 // a number, bool, null, type, timestamp or duration
}

// guardFlatten counts the elements l.flatten([depth]) would make, stopping at the limit: a list
// that holds the same large list many times is small, and its flattening is not.
func guardFlatten(args []ref.Val) error {
	l, ok := args[0].(traits.Lister)
	if !ok {
		return nil
	}
	depth := int64(1)
	if len(args) == 2 {
		if d, ok := args[1].(types.Int); ok {
			depth = int64(d)
		}
	}
	if n := flattenedSize(l, depth, 0); n > CELMaxListSize {
		return refuse("flatten", "a list", n, "elements or more", CELMaxListSize)
	}
	return nil
}

// flattenedSize counts the elements and lists visited, stopping once count passes the limit,
// so that the count itself takes bounded time.
func flattenedSize(l traits.Lister, depth int64, count uint64) uint64 {
	for i := range sizeOf(l) {
		count++
		if count > CELMaxListSize {
			return count
		}
		if inner, ok := l.Get(types.Int(i)).(traits.Lister); ok && depth > 0 {
			count = flattenedSize(inner, depth-1, count)
		}
	}
	return count
}

// guardSelfCompare refuses sort, distinct and sortBy of a list whose pairwise comparisons alone
// would go over the per-call cost limit: they run inside one call, where neither the cost
// tracker nor the time limit can stop them.
func guardSelfCompare(name string) guard {
	return func(args []ref.Val) error {
		l, ok := args[0].(traits.Lister)
		if !ok {
			return nil
		}
		if n := sizeOf(l); n*n > CELCallCostLimit {
			return &limitError{detail: fmt.Sprintf("%s of a list of %d elements would cost %d comparisons, over the per-call cost limit of %d",
				name, n, n*n, CELCallCostLimit)}
		}
		return nil
	}
}

// guardCrossCompare is guardSelfCompare for the set functions, which compare every element of
// one list with every element of the other.
func guardCrossCompare(name string) guard {
	return func(args []ref.Val) error {
		if len(args) != 2 {
			return nil
		}
		a, ok1 := args[0].(traits.Lister)
		b, ok2 := args[1].(traits.Lister)
		if !ok1 || !ok2 {
			return nil
		}
		if n := sizeOf(a) * sizeOf(b); n > CELCallCostLimit {
			return &limitError{detail: fmt.Sprintf("%s of lists of %d and %d elements would cost %d comparisons, over the per-call cost limit of %d",
				name, sizeOf(a), sizeOf(b), n, CELCallCostLimit)}
		}
		return nil
	}
}

// maxQuantityExponent is the largest decimal exponent a quantity may be written with. A
// quantity keeps its exponent as a scale, and comparing or adding two quantities brings them to
// one scale, which makes a number of that many digits: quantity("1e2000000000") takes
// gigabytes at its first comparison. Suffixes go up to E (10^18).
const maxQuantityExponent = 1000

// guardQuantity refuses quantity(s) for a text whose exponent is over maxQuantityExponent.
func guardQuantity(args []ref.Val) error {
	s, ok := args[0].(types.String)
	if !ok {
		return nil
	}
	i := strings.LastIndexAny(string(s), "eE")
	if i < 0 || i+1 >= len(s) {
		return nil
	}
	exp := strings.TrimLeft(string(s[i+1:]), "+-")
	if exp == "" || strings.Trim(exp, "0123456789") != "" {
		return nil
	}
	if len(strings.TrimLeft(exp, "0")) > 4 || atoiSmall(exp) > maxQuantityExponent {
		return &limitError{detail: fmt.Sprintf("quantity(%q) has an exponent over the limit of %d", truncate(string(s), 64), maxQuantityExponent)}
	}
	return nil
}

// atoiSmall parses a string of at most a few digits.
func atoiSmall(digits string) int {
	n := 0
	for _, d := range digits {
		n = min(n*10+int(d-'0'), 1<<30)
	}
	return n
}

// guardRegex checks the pattern, argument i, before the call compiles it.
func guardRegex(i int) guard {
	return func(args []ref.Val) error {
		if len(args) <= i {
			return nil
		}
		if p, ok := args[i].(types.String); ok {
			return checkRegex(string(p))
		}
		return nil
	}
}

// checkRegex refuses a pattern whose compiled program would have more than CELMaxRegexSize
// instructions. It parses the pattern (which takes memory in proportion to its text) and sizes
// the program from the parse tree, counting each repetition as the copies the compiler makes,
// without compiling it. A pattern that does not parse is left for the call to report.
func checkRegex(pattern string) error {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	if n := regexSize(re); n > CELMaxRegexSize {
		return &limitError{detail: fmt.Sprintf("the regular expression %q would compile to %d instructions or more, over the limit of %d",
			truncate(pattern, 64), n, CELMaxRegexSize)}
	}
	return nil
}

// regexSize is an upper bound of the instructions re compiles to, saturating above the limit.
func regexSize(re *syntax.Regexp) uint64 {
	var sub uint64
	for _, s := range re.Sub {
		sub += regexSize(s)
	}
	size := sub + uint64(len(re.Rune)) + 2
	if re.Op == syntax.OpRepeat {
		copies := uint64(max(re.Min, re.Max, 1))
		size = sub*copies + 2*copies
	}
	return min(size, 2*CELMaxRegexSize)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// checkConstantRegexes checks the constant patterns of an expression before the program is
// planned: cel-go's planner compiles them then, before any call runs.
func checkConstantRegexes(expr ast.Expr) error {
	var found error
	ast.PostOrderVisit(expr, ast.NewExprVisitor(func(e ast.Expr) {
		if found != nil || e.Kind() != ast.CallKind {
			return
		}
		call := e.AsCall()
		if !isRegexFunction(call.FunctionName()) {
			return
		}
		var vals []ref.Val
		if call.IsMemberFunction() {
			vals = append(vals, constantOf(call.Target()))
		}
		for _, arg := range call.Args() {
			vals = append(vals, constantOf(arg))
		}
		found = guards[call.FunctionName()](vals)
	}))
	return found
}

// constantOf is a literal's value, or nil for any other expression.
func constantOf(e ast.Expr) ref.Val {
	if e.Kind() == ast.LiteralKind {
		return e.AsLiteral()
	}
	return nil
}

func isRegexFunction(fn string) bool { return fn == "matches" || fn == "find" || fn == "findAll" }

// guardDecorator wraps every call to a guarded function in a guardedCall. It sees the calls as
// the planner makes them, before the constant folding, regex compilation and cost tracking
// decorators, so the cost tracker sees the guardedCall as the call it replaces.
func guardDecorator(disp interpreter.Dispatcher) interpreter.InterpretableDecorator {
	return func(i interpreter.Interpretable) (interpreter.Interpretable, error) {
		call, ok := i.(interpreter.InterpretableCall)
		if !ok {
			return i, nil
		}
		g, ok := guards[call.Function()]
		if !ok {
			return i, nil
		}
		impl, _ := disp.FindOverload(call.OverloadID())
		if impl == nil {
			impl, _ = disp.FindOverload(call.Function())
		}
		if impl == nil || impl.NonStrict {
			return i, nil
		}
		return &guardedCall{InterpretableCall: call, args: call.Args(), impl: impl, guard: g}, nil
	}
}

// guardedCall is a call whose arguments are checked by its guard before its implementation
// runs. It evaluates its arguments once, as cel-go's own call nodes do, and dispatches as they
// do: the implementation when the first argument has the trait it needs, the receiver's method
// otherwise.
type guardedCall struct {
	interpreter.InterpretableCall
	args  []interpreter.Interpretable
	impl  *functions.Overload
	guard guard
}

// Eval evaluates the arguments, refuses the call when the guard says so, and runs it otherwise.
func (c *guardedCall) Eval(vars interpreter.Activation) ref.Val {
	var buf [4]ref.Val
	vals := buf[:0]
	for _, a := range c.args {
		v := a.Eval(vars)
		if types.IsUnknownOrError(v) {
			return v
		}
		vals = append(vals, v)
	}
	if err := c.guard(vals); err != nil {
		return types.LabelErrNode(c.ID(), types.WrapErr(err))
	}
	if len(vals) == 0 || (c.impl.OperandTrait != 0 && !vals[0].Type().HasTrait(c.impl.OperandTrait)) {
		if len(vals) > 0 && vals[0].Type().HasTrait(traits.ReceiverType) {
			return types.LabelErrNode(c.ID(), vals[0].(traits.Receiver).Receive(c.Function(), c.OverloadID(), vals[1:]))
		}
		return types.NewErrWithNodeID(c.ID(), "no such overload: %s", c.Function())
	}
	var out ref.Val
	switch {
	case len(vals) == 1 && c.impl.Unary != nil:
		out = c.impl.Unary(vals[0])
	case len(vals) == 2 && c.impl.Binary != nil:
		out = c.impl.Binary(vals[0], vals[1])
	case c.impl.Function != nil:
		out = c.impl.Function(vals...)
	default:
		return types.NewErrWithNodeID(c.ID(), "no such overload: %s", c.Function())
	}
	return types.LabelErrNode(c.ID(), out)
}

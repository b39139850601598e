/**
 * The one way the extensions read a document another process wrote: `decode` parses text under
 * a size bound, checks the value against the shape its type promises (herd's formats are the
 * generated types of `generated/protocol.ts`, their shapes `formats.ts`), at the fields the
 * reader relies on, and returns the value as that type or says why it is not one. Nothing else
 * in the extensions parses JSON (`boundaries.test.ts`).
 *
 * A shape names its type's fields (`object<LaunchAck>({ run_id: string })` does not compile for
 * a field the type lacks or a check of another type), so a format changed in herd-protocol
 * breaks the reader at build time, and a document that breaks the promise is refused, never
 * half-read.
 */

/** A check of a value, standing for the type `T` a value that passes it is read as. */
export interface Shape<T> {
	/** Why `value` (found at `at`) is not what the shape promises, or undefined when it is. */
	readonly check: (value: unknown, at: string) => string | undefined;
	/**
	 * The type the shape stands for, exactly (never set, only read by the compiler): a field's
	 * shape must say what its type says, absent (`optional`), null (`nullable`) and every member
	 * of an enumeration (`literal`, or `member`) included.
	 */
	readonly type?: (value: T) => T;
}

/** A decoded value, or why there is none. */
export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** The bound of a document decoded without one of its own: one binary's answer or one record. */
export const DOCUMENT_LIMIT = 4 * 1024 * 1024;

/** A plain JSON object, as far as a reader looks into it. */
export type JsonObject = { readonly [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function shape<T>(check: (value: unknown, at: string) => string | undefined): Shape<T> {
	return { check };
}

function described(value: unknown): string {
	if (value === null) return "null";
	if (Array.isArray(value)) return "an array";
	return typeof value === "string" ? `the string ${JSON.stringify(value.slice(0, 40))}` : `a ${typeof value}`;
}

export const string: Shape<string> = shape((v, at) => (typeof v === "string" ? undefined : `${at} is ${described(v)}, not a string`));
export const boolean: Shape<boolean> = shape((v, at) => (typeof v === "boolean" ? undefined : `${at} is ${described(v)}, not a boolean`));
export const number: Shape<number> = shape((v, at) => (typeof v === "number" && Number.isFinite(v) ? undefined : `${at} is ${described(v)}, not a number`));
export const integer: Shape<number> = shape((v, at) => (Number.isInteger(v) ? undefined : `${at} is ${described(v)}, not an integer`));

/**
 * A string of the enumeration `T` that the reader only compares with the values it knows: a
 * value `T` lacks (a newer herd's) matches none of them, so it is not refused.
 */
export function member<T extends string>(): Shape<T> {
	return shape((v, at) => string.check(v, at));
}

/** A value of `inner` for which `test` holds; `rule` says what it requires. */
export function where<T>(inner: Shape<T>, test: (value: T) => boolean, rule: string): Shape<T> {
	return shape((v, at) => inner.check(v, at) ?? (test(v as T) ? undefined : `${at} is not ${rule}`));
}

/** One of `values`. */
export function literal<const L extends readonly (string | number | boolean)[]>(...values: L): Shape<L[number]> {
	return shape((v, at) => ((values as readonly unknown[]).includes(v) ? undefined : `${at} is ${described(v)}, not one of ${values.map((x) => JSON.stringify(x)).join(", ")}`));
}

/** `inner` or null. */
export function nullable<T>(inner: Shape<T>): Shape<T | null> {
	return shape((v, at) => (v === null ? undefined : inner.check(v, at)));
}

/** `inner`, or absent. */
export function optional<T>(inner: Shape<T>): Shape<T | undefined> {
	return shape((v, at) => (v === undefined ? undefined : inner.check(v, at)));
}

/** An array of `inner`. */
export function array<T>(inner: Shape<T>): Shape<T[]> {
	return shape((v, at) => {
		if (!Array.isArray(v)) return `${at} is ${described(v)}, not an array`;
		for (const [i, item] of v.entries()) {
			const why = inner.check(item, `${at}[${i}]`);
			if (why !== undefined) return why;
		}
		return undefined;
	});
}

/**
 * The checks of the fields of `T` a reader relies on; the other fields are taken as they are. An
 * optional field's check lets it be absent (`optional`); an index signature has none.
 */
export type Fields<T> = { readonly [K in keyof T as string extends K ? never : K]?: Shape<{} extends Pick<T, K> ? T[K] | undefined : T[K]> };

/** An object of type `T` whose `fields` pass their checks (every listed field is checked). */
export function object<T>(fields: Fields<T>): Shape<T> {
	const entries = Object.entries(fields) as [string, Shape<unknown>][];
	return shape((v, at) => {
		if (!isObject(v)) return `${at} is ${described(v)}, not an object`;
		for (const [key, inner] of entries) {
			const why = inner.check(v[key], `${at}.${key}`);
			if (why !== undefined) return why;
		}
		return undefined;
	});
}

/** The string-valued field `D` of every member of the union `T`. */
type Tag<T, D extends keyof T> = T[D] & string;

/**
 * A member of the tagged union `T` chosen by its field `tag`: the fields of each member the
 * reader knows; a tag it does not know is refused.
 */
export function variants<T, D extends keyof T & string>(tag: D, cases: { readonly [K in Tag<T, D>]?: Fields<Extract<T, Record<D, K>>> }): Shape<T> {
	const known = new Map<string, Shape<JsonObject>>();
	for (const [name, fields] of Object.entries(cases) as [string, Fields<JsonObject> | undefined][]) if (fields) known.set(name, object(fields));
	return shape((v, at) => {
		if (!isObject(v)) return `${at} is ${described(v)}, not an object`;
		const value = v[tag];
		const inner = typeof value === "string" ? known.get(value) : undefined;
		return inner === undefined ? `${at}.${tag} is ${described(value)}, not one this reader knows` : inner.check(v, at);
	});
}

/** `value` as a `T` when it passes `check`; `what` names it in the error. */
export function decodeValue<T>(value: unknown, check: Shape<T>, what: string): Decoded<T> {
	const why = check.check(value, what);
	// The one place a checked value becomes its type: `check` verified what the readers rely on.
	return why === undefined ? { ok: true, value: value as T } : { ok: false, error: why };
}

/** `text` parsed as JSON, at most `limit` characters, and decoded as `check`'s type. */
export function decode<T>(text: string | undefined, check: Shape<T>, what: string, limit = DOCUMENT_LIMIT): Decoded<T> {
	if (text === undefined || text.trim() === "") return { ok: false, error: `${what} is empty` };
	if (text.length > limit) return { ok: false, error: `${what} is larger than ${limit} characters` };
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (err) {
		return { ok: false, error: `${what} is not JSON: ${err instanceof Error ? err.message : String(err)}` };
	}
	return decodeValue(value, check, what);
}

/** The decoded value, or undefined: for a reader to which a refused document means "none". */
export function decoded<T>(text: string | undefined, check: Shape<T>, what: string, limit = DOCUMENT_LIMIT): T | undefined {
	const out = decode(text, check, what, limit);
	return out.ok ? out.value : undefined;
}

// Public API of the parser: XML-in-text tool calls (streaming), native tool-call fragments,
// continuation stitching. Pure code, no I/O.
export {
  XmlToolCallParser,
  coalesce,
  parseXmlToolCalls,
  unescapeXml,
  type ParseEvent,
  type ParsedXmlToolCall,
  type XmlParseProblem,
  type XmlParseResult,
} from './xml-stream.js';
export {
  NativeToolCallAssembler,
  parseNativeArguments,
  locateJsonError,
  type ToolCallFragment,
  type AssembledToolCall,
  type NativeArgumentsResult,
  type JsonFault,
} from './native.js';
export { stitchContinuation, stitchNativeArguments, longestOverlap, type StitchOptions, type StitchResult, type NativeStitchResult } from './stitch.js';

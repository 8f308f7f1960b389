// autocannon ships no types; the bench scripts declare the parts they use.
declare module "autocannon";

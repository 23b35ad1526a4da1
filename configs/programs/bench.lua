-- The lua5.4 program of the real-program sweep (configs/sweeps/programs.ini): tables,
-- closures and strings made and dropped in quantity, so the garbage collector frees most of
-- what the interpreter mallocs (Lua allocates through realloc). Deterministic: its own
-- linear congruential generator, output checksums only.
local seed = 12345
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end

-- binary trees of tables
local function tree(d)
  if d == 0 then return {} end
  return {tree(d - 1), tree(d - 1)}
end
local function count(t)
  if t[1] == nil then return 1 end
  return 1 + count(t[1]) + count(t[2])
end
local total = 0
local long = tree(16)
for d = 4, 16, 2 do
  for _ = 1, 2 ^ (18 - d) do total = total + count(tree(d)) end
end
print("trees", total + count(long))

-- string building, gsub, formatting, table.concat
local parts = {}
for i = 1, 400000 do
  parts[#parts + 1] = string.format("%d:%s", i, string.rep(string.char(97 + rand(26)), 1 + rand(8)))
end
local s = table.concat(parts, ",")
local n = 0
s = s:gsub("(%d+):(a+)", function(a, b) n = n + #b; return b .. a end)
print("strings", #s, n)

-- hash tables that grow and shrink, closures
local h, closures = {}, {}
for i = 1, 600000 do
  local k = "k" .. rand(60000)
  h[k] = (h[k] or 0) + i
  if i % 5 == 0 then h["k" .. rand(60000)] = nil end
  if i % 100 == 0 then
    local base = i
    closures[#closures + 1] = function(x) return x + base end
  end
end
local keys = {}
for k in pairs(h) do keys[#keys + 1] = k end
table.sort(keys)
local acc = 0
for i = 1, #keys, 97 do acc = (acc + h[keys[i]]) % 1000000007 end
for _, f in ipairs(closures) do acc = (acc + f(1)) % 1000000007 end
print("tables", #keys, acc)
